import type { Knex } from 'knex';

import { tenantId } from '../shared/tenant.ts';
import { RequestError } from '../http/errors.ts';
import { addLinks, linkedAmong, organizationLinks, removeLinks, replaceLinks, type LinkDelta } from './links.ts';
import { getOrganizationForUpdate, requireOrganizationRoles } from './lookups.ts';

// Just-in-time provisioning settings: users signing up with an e-mail in one of the domains join the
// organization with the JIT roles. Only stored here; sign-up reads them.

export async function addJitEmailDomain(trx: Knex.Transaction, organizationId: string, emailDomain: string) {
  await getOrganizationForUpdate(trx, organizationId);
  const links = organizationLinks.jitEmailDomains(organizationId);
  if ((await linkedAmong(trx, links, [emailDomain])).length > 0) {
    throw new RequestError('entity.unique_integrity_violation', {
      reason: `The email domain ${emailDomain} is already in this organization's JIT settings.`,
    });
  }
  await addLinks(trx, links, [emailDomain]);
  return { tenantId, organizationId, emailDomain };
}

export async function replaceJitEmailDomains(
  trx: Knex.Transaction,
  organizationId: string,
  emailDomains: string[],
): Promise<LinkDelta> {
  await getOrganizationForUpdate(trx, organizationId);
  return replaceLinks(trx, organizationLinks.jitEmailDomains(organizationId), emailDomains);
}

export async function removeJitEmailDomain(
  trx: Knex.Transaction,
  organizationId: string,
  emailDomain: string,
): Promise<void> {
  await getOrganizationForUpdate(trx, organizationId);
  if ((await removeLinks(trx, organizationLinks.jitEmailDomains(organizationId), [emailDomain])) === 0) {
    throw new RequestError('entity.not_exists_with_id', { entity: 'email domain', id: emailDomain });
  }
}

/** JIT roles go to users, so they are User roles. Roles in the set already are kept. */
export async function addJitRoles(trx: Knex.Transaction, organizationId: string, roleIds: string[]): Promise<string[]> {
  await getOrganizationForUpdate(trx, organizationId);
  await requireOrganizationRoles(trx, roleIds, 'User');
  return addLinks(trx, organizationLinks.jitRoles(organizationId), roleIds);
}

export async function replaceJitRoles(
  trx: Knex.Transaction,
  organizationId: string,
  roleIds: string[],
): Promise<LinkDelta> {
  await getOrganizationForUpdate(trx, organizationId);
  await requireOrganizationRoles(trx, roleIds, 'User');
  return replaceLinks(trx, organizationLinks.jitRoles(organizationId), roleIds);
}

export async function removeJitRole(trx: Knex.Transaction, organizationId: string, roleId: string): Promise<void> {
  await getOrganizationForUpdate(trx, organizationId);
  if ((await removeLinks(trx, organizationLinks.jitRoles(organizationId), [roleId])) === 0) {
    throw new RequestError('entity.not_exists_with_id', { entity: 'organization role', id: roleId });
  }
}

/** Organizations that admit the users of enterprise SSO connectors as they sign in. */
async function requireSsoConnectors(trx: Knex.Transaction, ids: string[]): Promise<void> {
  const known = new Set<string>(await trx('sso_connectors').whereIn('id', ids).pluck('id'));
  const missing = ids.find((id) => !known.has(id));
  if (missing !== undefined) {
    throw new RequestError('entity.relation_foreign_key_not_found', { entity: 'SSO connector', id: missing });
  }
}

export async function addJitSsoConnectors(
  trx: Knex.Transaction,
  organizationId: string,
  connectorIds: string[],
): Promise<string[]> {
  await getOrganizationForUpdate(trx, organizationId);
  await requireSsoConnectors(trx, connectorIds);
  return addLinks(trx, organizationLinks.jitSsoConnectors(organizationId), connectorIds);
}

export async function replaceJitSsoConnectors(
  trx: Knex.Transaction,
  organizationId: string,
  connectorIds: string[],
): Promise<LinkDelta> {
  await getOrganizationForUpdate(trx, organizationId);
  await requireSsoConnectors(trx, connectorIds);
  return replaceLinks(trx, organizationLinks.jitSsoConnectors(organizationId), connectorIds);
}

export async function removeJitSsoConnector(
  trx: Knex.Transaction,
  organizationId: string,
  connectorId: string,
): Promise<void> {
  await getOrganizationForUpdate(trx, organizationId);
  if ((await removeLinks(trx, organizationLinks.jitSsoConnectors(organizationId), [connectorId])) === 0) {
    throw new RequestError('entity.not_exists_with_id', { entity: 'SSO connector', id: connectorId });
  }
}
