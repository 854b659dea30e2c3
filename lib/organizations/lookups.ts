import type { Knex } from 'knex';

import { listApplications } from '../applications/queries.ts';
import { orNotFound, RequestError } from '../http/errors.ts';
import { findScopesByIds } from '../resources/queries.ts';
import { assertScopesFitRoleType } from '../roles/assignments.ts';
import type { Queryable } from '../storage/database.ts';
import { findUsersByIds } from '../users/queries.ts';
import { findInvitation } from './invitations/invitation-queries.ts';
import { linkedAmong, organizationLinks } from './links.ts';
import { findOrganization, findOrganizationForUpdate } from './queries.ts';
import {
  findOrganizationRole,
  findOrganizationRoleForUpdate,
  findOrganizationRolesByIds,
  findOrganizationRolesByNames,
  findOrganizationScope,
  findOrganizationScopeForUpdate,
  findOrganizationScopesByIds,
} from './roles/role-queries.ts';
import type { Invitation, Organization, OrganizationRole, OrganizationRoleType, OrganizationScope } from './schemas.ts';

export const getOrganization = async (db: Queryable, id: string): Promise<Organization> =>
  orNotFound(await findOrganization(db, id), 'organization', id);

/**
 * The organization, locked until the transaction ends: every change of it or of what it links
 * (members, their roles, JIT settings) takes it first, so concurrent changes run one after the other.
 */
export const getOrganizationForUpdate = async (trx: Knex.Transaction, id: string): Promise<Organization> =>
  orNotFound(await findOrganizationForUpdate(trx, id), 'organization', id);

/** An organization as the parent of a link set (its members, its JIT settings). */
export const organizationParent = {
  find: (db: Queryable, params: { id: string }) => getOrganization(db, params.id),
  lock: (trx: Knex.Transaction, params: { id: string }) => getOrganizationForUpdate(trx, params.id),
};

export const getOrganizationRole = async (db: Queryable, id: string): Promise<OrganizationRole> =>
  orNotFound(await findOrganizationRole(db, id), 'organization role', id);

/** The role, locked until the transaction ends: for a change of it or of its scopes. */
export const getOrganizationRoleForUpdate = async (trx: Knex.Transaction, id: string): Promise<OrganizationRole> =>
  orNotFound(await findOrganizationRoleForUpdate(trx, id), 'organization role', id);

/** An organization role as the parent of a link set (what it grants). */
export const organizationRoleParent = {
  find: (db: Queryable, params: { id: string }) => getOrganizationRole(db, params.id),
  lock: (trx: Knex.Transaction, params: { id: string }) => getOrganizationRoleForUpdate(trx, params.id),
};

export const getOrganizationScope = async (db: Queryable, id: string): Promise<OrganizationScope> =>
  orNotFound(await findOrganizationScope(db, id), 'organization scope', id);

export const getOrganizationScopeForUpdate = async (trx: Knex.Transaction, id: string): Promise<OrganizationScope> =>
  orNotFound(await findOrganizationScopeForUpdate(trx, id), 'organization scope', id);

export async function getInvitation(db: Queryable, id: string): Promise<Invitation> {
  const invitation = await findInvitation(db, id);
  if (!invitation) {
    throw new RequestError('entity.not_exists_with_id', { entity: 'organization invitation', id });
  }
  return invitation;
}

/**
 * A body naming an entity that does not exist: Logto answers 422 (its foreign key fails); we say
 * which one, before anything is written.
 */
function assertAllFound(entity: string, ids: string[], found: Array<{ id: string }>): void {
  const known = new Set(found.map(({ id }) => id));
  const missing = ids.find((id) => !known.has(id));
  if (missing !== undefined) {
    throw new RequestError('entity.relation_foreign_key_not_found', { entity, id: missing });
  }
}

export async function requireUsers(db: Queryable, ids: string[]): Promise<void> {
  const unique = [...new Set(ids)];
  assertAllFound('user', unique, await findUsersByIds(db, unique));
}

/** Only machine-to-machine applications join organizations (Logto's rule). */
export async function requireMachineApplications(db: Queryable, ids: string[]): Promise<void> {
  const unique = [...new Set(ids)];
  const { items } = await listApplications(db, { ids: unique }, { offset: 0 });
  assertAllFound('application', unique, items);
  const other = items.find(({ type }) => type !== 'MachineToMachine');
  if (other) {
    // Logto's database refuses such rows with a check constraint; the code is the same.
    throw new RequestError('entity.db_constraint_violated', {
      reason: `The application \`${other.id}\` is not a machine-to-machine application; only those join organizations.`,
    });
  }
}

/**
 * Resolves organization roles by id; with a `type`, every role must be of it: users hold User
 * roles, applications MachineToMachine ones (Logto's check constraints).
 */
export async function requireOrganizationRoles(
  db: Queryable,
  ids: string[],
  type?: OrganizationRoleType,
): Promise<OrganizationRole[]> {
  const unique = [...new Set(ids)];
  const roles = await findOrganizationRolesByIds(db, unique);
  assertAllFound('organization role', unique, roles);
  if (type) {
    assertOrganizationRoleTypes(roles, type);
  }
  return roles;
}

/**
 * Users get User organization roles, applications MachineToMachine ones (just-in-time roles go to
 * users). The routes' rule and the import's.
 */
export function assertOrganizationRoleTypes(
  roles: Array<Pick<OrganizationRole, 'name' | 'type'>>,
  type: OrganizationRoleType,
): void {
  const mismatched = roles.find((role) => role.type !== type);
  if (mismatched) {
    const holder = type === 'User' ? 'users' : 'machine-to-machine applications';
    throw new RequestError('entity.db_constraint_violated', {
      reason: `The organization role \`${mismatched.name}\` is of type ${mismatched.type}; only ${type} roles can be given to ${holder}.`,
    });
  }
}

/** Role ids from ids and names together; an unknown name is 422 organization.role_names_not_found. */
export async function resolveRoleIds(db: Queryable, ids: string[], names: string[]): Promise<string[]> {
  const uniqueNames = [...new Set(names)];
  const named = uniqueNames.length > 0 ? await findOrganizationRolesByNames(db, uniqueNames) : [];
  const missing = uniqueNames.filter((name) => !named.some((role) => role.name === name));
  if (missing.length > 0) {
    throw new RequestError('organization.role_names_not_found', { names: missing });
  }
  return [...new Set([...ids, ...named.map(({ id }) => id)])];
}

export async function requireOrganizationScopes(db: Queryable, ids: string[]): Promise<void> {
  const unique = [...new Set(ids)];
  assertAllFound('organization scope', unique, await findOrganizationScopesByIds(db, unique));
}

/**
 * API resource scopes for an organization role. As for user roles (lib/roles), a User role cannot
 * grant the management API: organization roles count in the same permission model.
 */
export async function requireResourceScopes(
  db: Queryable,
  ids: string[],
  roleType: OrganizationRoleType,
): Promise<void> {
  const unique = [...new Set(ids)];
  const scopes = await findScopesByIds(db, unique);
  assertAllFound('scope', unique, scopes);
  assertScopesFitRoleType(roleType, scopes);
}

/** Member roles need a membership first: 422 organization.require_membership, as Logto. */
export async function requireMembers(
  db: Queryable,
  kind: 'user' | 'application',
  organizationId: string,
  memberIds: string[],
): Promise<void> {
  const links =
    kind === 'user' ? organizationLinks.users(organizationId) : organizationLinks.applications(organizationId);
  const members = new Set(await linkedAmong(db, links, memberIds));
  const outsider = memberIds.find((id) => !members.has(id));
  if (outsider !== undefined) {
    throw new RequestError('organization.require_membership', { kind, id: outsider });
  }
}
