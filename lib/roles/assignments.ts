import type { Knex } from 'knex';

import { findApplication, findApplicationForUpdate } from '../applications/queries.ts';
import type { Application } from '../applications/schemas.ts';
import { consoleApp } from '../console/console-app.ts';
import { noteAdministrator } from '../console/first-run.ts';
import { RequestError, notFound, orNotFound } from '../http/errors.ts';
import { managementApi } from '../resources/management-api.ts';
import { findScopesByIds } from '../resources/queries.ts';
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

export const getRole = async (db: Queryable, id: string): Promise<Role> => orNotFound(await findRole(db, id), 'role', id);

/** The role, locked until the transaction ends: for a change that builds on what it holds. */
export const getRoleForUpdate = async (trx: Knex.Transaction, id: string): Promise<Role> => orNotFound(await findRoleForUpdate(trx, id), 'role', id);

/** Only machine-to-machine applications hold roles (Logto's rule): user roles belong to people. */
function roleHolder(application: Application | undefined, id: string): Application {
  if (!application) {
    throw notFound('application', id);
  }
  if (application.type !== 'MachineToMachine') {
    throw new RequestError({ code: 'application.invalid_type', status: 422 }, 'Only machine to machine applications can have associated roles.');
  }
  return application;
}

export const getRoleHolderApplication = async (db: Queryable, id: string): Promise<Application> => roleHolder(await findApplication(db, id), id);

/** The application, locked until the transaction ends: for a change of the roles it holds. */
export const getRoleHolderApplicationForUpdate = async (trx: Knex.Transaction, id: string): Promise<Application> =>
  roleHolder(await findApplicationForUpdate(trx, id), id);

export function assertMachineToMachineRoles(roles: Role[]): void {
  if (roles.some((role) => role.type !== 'MachineToMachine')) {
    throw new RequestError(
      { code: 'application.invalid_role_type', status: 422 },
      'Can not assign user type role to machine to machine application.',
    );
  }
}

/** Resolves every id or throws 404 naming the first missing one. */
export async function getRoles(db: Queryable, ids: string[]): Promise<Role[]> {
  const unique = [...new Set(ids)];
  const roles = await findRolesByIds(db, unique);
  const missing = unique.find((id) => !roles.some((role) => role.id === id));
  if (missing) {
    throw notFound('role', missing);
  }
  return roles;
}

export function assertUserRoles(roles: Role[]): void {
  if (roles.some((role) => role.type !== 'User')) {
    throw new RequestError(
      { code: 'user.invalid_role_type', status: 422 },
      'Invalid role type: a machine-to-machine role cannot be assigned to a user.',
    );
  }
}

/**
 * Adds roles a user does not hold yet; returns the ids newly added. The user's row is locked first
 * so that concurrent assignments see each other's rows (call it inside a transaction). A new
 * administrator, however made, is noted: it ends the console's first run.
 */
export async function addRolesToUser(db: Queryable, userId: string, roleIds: string[]): Promise<string[]> {
  await db('users').where({ id: userId }).update({ updated_at: db.raw('updated_at') });
  const held = new Set(await roleIdsOfUser(db, userId));
  const added = [...new Set(roleIds)].filter((id) => !held.has(id));
  await addUserRoles(db, added.map((roleId) => ({ userId, roleId })));
  if (added.includes(consoleApp.roleId)) {
    await noteAdministrator(db);
  }
  return added;
}

/** Adds roles an application does not hold yet; returns the ids newly added (locked as for users). */
export async function addRolesToApplication(db: Queryable, applicationId: string, roleIds: string[]): Promise<string[]> {
  await db('applications').where({ id: applicationId }).update({ created_at: db.raw('created_at') });
  const held = new Set(await roleIdsOfApplication(db, applicationId));
  const added = [...new Set(roleIds)].filter((id) => !held.has(id));
  await addApplicationRoles(db, added.map((roleId) => ({ applicationId, roleId })));
  return added;
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
    throw notFound('scope', missing);
  }
  if (role.type === 'User' && scopes.some((scope) => scope.resourceId === managementApi.resourceId)) {
    throw new RequestError(
      { code: 'role.management_api_scopes_not_assignable_to_user_role', status: 400 },
      'Cannot assign management API scopes to a user role.',
    );
  }
  const linked = new Set(await scopeIdsOfRole(db, role.id));
  const duplicate = unique.find((id) => linked.has(id));
  if (duplicate) {
    throw new RequestError({ code: 'role.scope_exists', status: 422 }, `The scope id ${duplicate} has already been added to this role.`, {
      data: { scopeId: duplicate },
    });
  }
  await addRoleScopes(db, role.id, unique);
  return scopes;
}
