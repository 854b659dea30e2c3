import type { Knex } from 'knex';

import { tenantId } from '../shared/tenant.ts';
import { generateId } from '../storage/ids.ts';
import { getOrganizationForUpdate } from './lookups.ts';
import { deleteOrganization, insertOrganization, updateOrganization } from './queries.ts';
import type { Organization, OrganizationChanges } from './schemas.ts';

// One function per change to an organization, each run inside the caller's transaction, so the
// change and anything recorded about it (webhook events) commit together.

export async function createOrganization(
  trx: Knex.Transaction,
  input: Omit<OrganizationChanges, 'tenantId'> & { name: string },
): Promise<Organization> {
  const organization: Organization = {
    tenantId,
    id: generateId(),
    name: input.name,
    description: input.description ?? null,
    customData: input.customData ?? {},
    isMfaRequired: input.isMfaRequired ?? false,
    color: input.color ?? {},
    branding: input.branding ?? {},
    customCss: input.customCss ?? null,
    createdAt: Date.now(),
  };
  await insertOrganization(trx, organization);
  return organization;
}

/** `customData`, `color` and `branding` are replaced, not merged (Logto's PATCH); null clears them. */
export async function patchOrganization(
  trx: Knex.Transaction,
  id: string,
  changes: OrganizationChanges,
): Promise<Organization> {
  const current = await getOrganizationForUpdate(trx, id);
  const next: Organization = {
    ...current,
    name: changes.name ?? current.name,
    description: changes.description === undefined ? current.description : changes.description,
    customData: changes.customData ?? current.customData,
    isMfaRequired: changes.isMfaRequired ?? current.isMfaRequired,
    color: changes.color === undefined ? current.color : (changes.color ?? {}),
    branding: changes.branding === undefined ? current.branding : (changes.branding ?? {}),
    customCss: changes.customCss === undefined ? current.customCss : changes.customCss,
  };
  await updateOrganization(trx, next);
  return next;
}

/** Its memberships, member roles, JIT settings and invitations go with it. */
/** Returns what was removed: the data of the Organization.Deleted event. */
export async function removeOrganization(trx: Knex.Transaction, id: string): Promise<Organization> {
  const organization = await getOrganizationForUpdate(trx, id);
  await deleteOrganization(trx, id);
  return organization;
}
