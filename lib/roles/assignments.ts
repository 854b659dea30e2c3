import type { Knex } from 'knex';

import { noteAdministrator } from '../administrators/first-administrator.ts';
import { findApplication, findApplicationForUpdate } from '../applications/queries.ts';
import type { Application } from '../applications/schemas.ts';
import { orNotFound, RequestError } from '../http/errors.ts';
import { findScopesByIds } from '../resources/queries.ts';
import { consoleApp } from '../shared/console-ids.ts';
import { managementApi } from '../shared/management-api.ts';
import type { Queryable } from '../storage/database.ts';
import {
  addApplicationRoles,
  addRoleScopes,
  addUserRoles,
  findRole,
  findRoleForUpdate,
  findRolesByIds,
  roleIdsOfApplication,
  roleIdsOfUser,
  scopeIdsOfRole,
} from './queries.ts';
import type { Role } from './schemas.ts';

export const getRole = async (db: Queryable, id: string): Promise<Role> =>
  orNotFound(await findRole(db, id), 'role', id);

/** The role, locked until the transaction ends: for a change that builds on what it holds. */
export const getRoleForUpdate = async (trx: Knex.Transaction, id: string): Promise<Role> =>
  orNotFound(await findRoleForUpdate(trx, id), 'role', id);

/** Only machine-to-machine applications hold roles (Logto's rule): user roles belong to people. */
function roleHolder(application: Application | undefined, id: string): Application {
  if (!application) {
    throw new RequestError('entity.not_exists_with_id', { entity: 'application', id });
  }
  assertRoleHolderType(application);
  return application;
}

/** Only machine-to-machine applications hold roles (the routes' rule and the import's). */
export function assertRoleHolderType(application: Pick<Application, 'type'>): void {
  if (application.type !== 'MachineToMachine') {
    throw new RequestError('application.invalid_type');
  }
}

export const getRoleHolderApplication = async (db: Queryable, id: string): Promise<Application> =>
  roleHolder(await findApplication(db, id), id);

/** The application, locked until the transaction ends: for a change of the roles it holds. */
export const getRoleHolderApplicationForUpdate = async (trx: Knex.Transaction, id: string): Promise<Application> =>
  roleHolder(await findApplicationForUpdate(trx, id), id);

export function assertMachineToMachineRoles(roles: Array<Pick<Role, 'type'>>): void {
  if (roles.some((role) => role.type !== 'MachineToMachine')) {
    throw new RequestError('application.invalid_role_type');
  }
}

/** Resolves every id or throws 404 naming the first missing one. */
export async function getRoles(db: Queryable, ids: string[]): Promise<Role[]> {
  const unique = [...new Set(ids)];
  const roles = await findRolesByIds(db, unique);
  const missing = unique.find((id) => !roles.some((role) => role.id === id));
  if (missing) {
    throw new RequestError('entity.not_exists_with_id', { entity: 'role', id: missing });
  }
  return roles;
}

export function assertUserRoles(roles: Role[]): void {
  if (roles.some((role) => role.type !== 'User')) {
    throw new RequestError('user.invalid_role_type');
  }
}

/**
 * Adds roles a user does not hold yet; returns the ids newly added. The caller holds the user's row
 * locked (it inserted it, or read it for update: users/, which owns it, lies above roles/), so that
 * concurrent assignments see each other's rows. A new administrator, however made, is noted: it
 * ends the console's first run.
 */
export async function addRolesToUser(db: Queryable, userId: string, roleIds: string[]): Promise<string[]> {
  const held = new Set(await roleIdsOfUser(db, userId));
  const added = [...new Set(roleIds)].filter((id) => !held.has(id));
  await addUserRoles(
    db,
    added.map((roleId) => ({ userId, roleId })),
  );
  if (added.includes(consoleApp.roleId)) {
    await noteAdministrator(db);
  }
  return added;
}

/**
 * Adds roles an application does not hold yet; returns the ids newly added. The application's row is
 * locked first so that concurrent assignments see each other's rows.
 */
export async function addRolesToApplication(
  trx: Knex.Transaction,
  applicationId: string,
  roleIds: string[],
): Promise<string[]> {
  await findApplicationForUpdate(trx, applicationId);
  const held = new Set(await roleIdsOfApplication(trx, applicationId));
  const added = [...new Set(roleIds)].filter((id) => !held.has(id));
  await addApplicationRoles(
    trx,
    added.map((roleId) => ({ applicationId, roleId })),
  );
  return added;
}

/**
 * The management API's scopes are for machine-to-machine roles only: a user role (or a user
 * organization role, which counts in the same permission model) holding `all` would hand the
 * console to whoever gets the role, just-in-time members included. The routes' rule and the import's.
 */
export function assertScopesFitRoleType(roleType: string, scopes: Array<{ resourceId: string }>): void {
  if (roleType === 'User' && scopes.some((scope) => scope.resourceId === managementApi.resourceId)) {
    throw new RequestError('role.management_api_scopes_not_assignable_to_user_role');
  }
}

/**
 * Links scopes to a role. Every id must exist (404); already-linked ones are refused (422, as Logto);
 * the management API's scope is for machine-to-machine roles only.
 */
export async function linkScopesToRole(db: Queryable, role: Role, scopeIds: string[]) {
  const unique = [...new Set(scopeIds)];
  const scopes = await findScopesByIds(db, unique);
  const missing = unique.find((id) => !scopes.some((scope) => scope.id === id));
  if (missing) {
    throw new RequestError('entity.not_exists_with_id', { entity: 'scope', id: missing });
  }
  assertScopesFitRoleType(role.type, scopes);
  const linked = new Set(await scopeIdsOfRole(db, role.id));
  const duplicate = unique.find((id) => linked.has(id));
  if (duplicate) {
    throw new RequestError('role.scope_exists', { scopeId: duplicate });
  }
  await addRoleScopes(db, role.id, unique);
  return scopes;
}
