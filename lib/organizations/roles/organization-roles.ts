import type { Knex } from 'knex';

import { RequestError } from '../../http/errors.ts';
import { tenantId } from '../../shared/tenant.ts';
import { generateId } from '../../storage/ids.ts';
import { addLinks, type Links, organizationLinks } from '../links.ts';
import { getOrganizationRoleForUpdate, requireOrganizationScopes, requireResourceScopes } from '../lookups.ts';
import type { OrganizationRole, OrganizationRoleType } from '../schemas.ts';
import {
  deleteOrganizationRole,
  findOrganizationRoleByName,
  insertOrganizationRole,
  updateOrganizationRole,
} from './role-queries.ts';

// Changes to the organization template's roles and what they grant, one function each, inside the
// caller's transaction.

async function assertRoleNameFree(trx: Knex.Transaction, name: string): Promise<void> {
  if (await findOrganizationRoleByName(trx, name)) {
    throw new RequestError('entity.unique_integrity_violation', {
      reason: `The organization role name ${name} is already in use.`,
    });
  }
}

/** A role grants organization scopes and API resource scopes; each kind has its link table and check. */
export type RoleGrant = 'scopes' | 'resourceScopes';

const grantLinks = (grant: RoleGrant, roleId: string): Links =>
  grant === 'scopes' ? organizationLinks.roleScopes(roleId) : organizationLinks.roleResourceScopes(roleId);

const requireGranted = (trx: Knex.Transaction, grant: RoleGrant, role: OrganizationRole, ids: string[]) =>
  grant === 'scopes' ? requireOrganizationScopes(trx, ids) : requireResourceScopes(trx, ids, role.type);

/** The role and its initial scopes together: an unknown scope id leaves nothing behind. */
export async function createOrganizationRole(
  trx: Knex.Transaction,
  input: {
    name: string;
    description?: string | null;
    type?: OrganizationRoleType;
    organizationScopeIds?: string[];
    resourceScopeIds?: string[];
  },
): Promise<OrganizationRole> {
  await assertRoleNameFree(trx, input.name);
  const role: OrganizationRole = {
    tenantId,
    id: generateId(),
    name: input.name,
    description: input.description ?? null,
    type: input.type ?? 'User',
  };
  await insertOrganizationRole(trx, role);
  await addRoleGrants(trx, 'scopes', role.id, input.organizationScopeIds ?? []);
  await addRoleGrants(trx, 'resourceScopes', role.id, input.resourceScopeIds ?? []);
  return role;
}

export async function patchOrganizationRole(
  trx: Knex.Transaction,
  id: string,
  changes: { name?: string; description?: string | null },
): Promise<OrganizationRole> {
  const current = await getOrganizationRoleForUpdate(trx, id);
  if (changes.name !== undefined && changes.name !== current.name) {
    await assertRoleNameFree(trx, changes.name);
  }
  const next = {
    ...current,
    name: changes.name ?? current.name,
    description: changes.description === undefined ? current.description : changes.description,
  };
  await updateOrganizationRole(trx, next);
  return next;
}

/** Members, JIT settings and pending invitations lose the role. */
/** Returns what was removed: the data of the OrganizationRole.Deleted event. */
export async function removeOrganizationRole(trx: Knex.Transaction, id: string): Promise<OrganizationRole> {
  const role = await getOrganizationRoleForUpdate(trx, id);
  await deleteOrganizationRole(trx, id);
  return role;
}

/** Links scopes to a role; those linked already are kept (Logto's behaviour). Returns the newly linked. */
export async function addRoleGrants(
  trx: Knex.Transaction,
  grant: RoleGrant,
  roleId: string,
  ids: string[],
): Promise<string[]> {
  if (ids.length === 0) {
    return [];
  }
  const role = await getOrganizationRoleForUpdate(trx, roleId);
  await requireGranted(trx, grant, role, ids);
  return addLinks(trx, grantLinks(grant, roleId), ids);
}
