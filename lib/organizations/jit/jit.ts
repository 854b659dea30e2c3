import type { Knex } from 'knex';

import { RequestError } from '../../http/errors.ts';
import { tenantId } from '../../shared/tenant.ts';
import { existingSsoConnectorIds } from '../../sso/queries.ts';
import { addLinks, linkedAmong, organizationLinks } from '../links.ts';
import { getOrganizationForUpdate } from '../lookups.ts';

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

/** Organizations that admit the users of enterprise SSO connectors as they sign in. */
export async function requireSsoConnectors(trx: Knex.Transaction, ids: string[]): Promise<void> {
  const known = new Set(await existingSsoConnectorIds(trx, ids));
  const missing = ids.find((id) => !known.has(id));
  if (missing !== undefined) {
    throw new RequestError('entity.relation_foreign_key_not_found', { entity: 'SSO connector', id: missing });
  }
}
