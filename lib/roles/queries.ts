import type { Knex } from 'knex';

import { scopeSearchColumns, toScope } from '../resources/queries.ts';
import type { Resource, Scope } from '../resources/schemas.ts';
import { tenantId } from '../shared/tenant.ts';
import type { Queryable } from '../storage/database.ts';
import { listPage, type Page } from '../storage/list.ts';
import { type Search, whereSearch } from '../storage/search.ts';
import { bumpCacheVersion } from '../storage/shared-cache.ts';
import type { Role, RoleType } from './schemas.ts';

type RoleRow = { id: string; name: string; description: string; type: RoleType; is_default: number | boolean };

const toRole = (row: RoleRow): Role => ({
  tenantId,
  id: row.id,
  name: row.name,
  description: row.description,
  type: row.type,
  isDefault: Boolean(row.is_default),
});

export async function insertRole(db: Queryable, role: Role): Promise<void> {
  await db('roles').insert({
    id: role.id,
    name: role.name,
    description: role.description,
    type: role.type,
    is_default: role.isDefault,
    created_at: Date.now(),
  });
  await bumpCacheVersion(db, 'roles');
}

export async function findRole(db: Queryable, id: string): Promise<Role | undefined> {
  const row = await db('roles').where({ id }).first<RoleRow | undefined>();
  return row && toRole(row);
}

/** The role, its row locked until the transaction ends: read so before changing it. */
export async function findRoleForUpdate(trx: Knex.Transaction, id: string): Promise<Role | undefined> {
  const row = await trx('roles').where({ id }).forUpdate().first<RoleRow | undefined>();
  return row && toRole(row);
}

export async function findRoleByName(db: Queryable, name: string): Promise<Role | undefined> {
  const row = await db('roles').where({ name }).first<RoleRow | undefined>();
  return row && toRole(row);
}

export async function findRolesByIds(db: Queryable, ids: string[]): Promise<Role[]> {
  const rows = await db('roles').whereIn('id', ids).select<RoleRow[]>('*');
  return rows.map(toRole);
}

/** What Logto's role search covers (storage/search.ts). */
export const roleSearchColumns = { id: 'id', name: 'name', description: 'description' } as const;

export type RoleFilter = {
  ids?: string[];
  type?: RoleType;
  search?: Search;
  excludeApplicationId?: string;
  excludeUserId?: string;
};

export async function listRoles(
  db: Queryable,
  filter: RoleFilter,
  page: Page,
): Promise<{ items: Role[]; total: number }> {
  const query = db('roles').select('*');
  if (filter.ids) {
    query.whereIn('id', filter.ids);
  }
  if (filter.type) {
    query.where({ type: filter.type });
  }
  if (filter.search) {
    whereSearch(db, query, filter.search, roleSearchColumns);
  }
  if (filter.excludeUserId) {
    query.whereNotIn('id', db('users_roles').where({ user_id: filter.excludeUserId }).select('role_id'));
  }
  if (filter.excludeApplicationId) {
    query.whereNotIn(
      'id',
      db('applications_roles').where({ application_id: filter.excludeApplicationId }).select('role_id'),
    );
  }
  const { rows, total } = await listPage<RoleRow>(query, page);
  return { items: rows.map(toRole), total };
}

export async function updateRole(db: Queryable, role: Role): Promise<void> {
  await db('roles')
    .where({ id: role.id })
    .update({ name: role.name, description: role.description, is_default: role.isDefault });
  await bumpCacheVersion(db, 'roles');
}

export async function deleteRole(db: Queryable, id: string): Promise<boolean> {
  const deleted = await db('roles').where({ id }).delete();
  await bumpCacheVersion(db, 'roles');
  return deleted > 0;
}

type ResourceColumns = {
  r_id: string;
  r_name: string;
  r_indicator: string;
  r_is_default: number | boolean;
  r_ttl: number;
  r_is_exchange_target: number | boolean;
};

export async function listRoleScopes(
  db: Queryable,
  roleId: string,
  search: Search,
  page: Page,
): Promise<{ items: Array<Scope & { resource: Resource }>; total: number }> {
  const query = db('roles_scopes')
    .join('scopes', 'scopes.id', 'roles_scopes.scope_id')
    .join('resources', 'resources.id', 'scopes.resource_id')
    .where('roles_scopes.role_id', roleId)
    .select(
      'scopes.*',
      'resources.id as r_id',
      'resources.name as r_name',
      'resources.indicator as r_indicator',
      'resources.is_default as r_is_default',
      'resources.access_token_ttl as r_ttl',
      'resources.is_exchange_target as r_is_exchange_target',
    );
  whereSearch(db, query, search, scopeSearchColumns);
  const { rows, total } = await listPage<Parameters<typeof toScope>[0] & ResourceColumns>(query, page, [
    { column: 'scopes.created_at', order: 'desc' },
    { column: 'scopes.id' },
  ]);
  return {
    items: rows.map((row) => ({
      ...toScope(row),
      resource: {
        tenantId,
        id: row.r_id,
        name: row.r_name,
        indicator: row.r_indicator,
        isDefault: Boolean(row.r_is_default),
        accessTokenTtl: row.r_ttl,
        isExchangeTarget: Boolean(row.r_is_exchange_target),
      },
    })),
    total,
  };
}

export async function scopeIdsOfRole(db: Queryable, roleId: string): Promise<string[]> {
  return db('roles_scopes').where({ role_id: roleId }).pluck('scope_id');
}

export async function addRoleScopes(db: Queryable, roleId: string, scopeIds: string[]): Promise<void> {
  if (scopeIds.length > 0) {
    await db('roles_scopes').insert(scopeIds.map((scopeId) => ({ role_id: roleId, scope_id: scopeId })));
    await bumpCacheVersion(db, 'roles');
  }
}

export async function removeRoleScope(db: Queryable, roleId: string, scopeId: string): Promise<boolean> {
  const removed = await db('roles_scopes').where({ role_id: roleId, scope_id: scopeId }).delete();
  await bumpCacheVersion(db, 'roles');
  return removed > 0;
}

export async function roleIdsOfApplication(db: Queryable, applicationId: string): Promise<string[]> {
  return db('applications_roles').where({ application_id: applicationId }).pluck('role_id');
}

export async function applicationIdsOfRole(db: Queryable, roleId: string): Promise<string[]> {
  return db('applications_roles').where({ role_id: roleId }).pluck('application_id');
}

export async function addApplicationRoles(
  db: Queryable,
  pairs: Array<{ applicationId: string; roleId: string }>,
): Promise<void> {
  if (pairs.length > 0) {
    await db('applications_roles').insert(
      pairs.map((pair) => ({ application_id: pair.applicationId, role_id: pair.roleId })),
    );
    await bumpCacheVersion(db, 'roles');
  }
}

export async function removeApplicationRoles(db: Queryable, applicationId: string, roleIds: string[]): Promise<number> {
  const removed = await db('applications_roles')
    .where({ application_id: applicationId })
    .whereIn('role_id', roleIds)
    .delete();
  await bumpCacheVersion(db, 'roles');
  return removed;
}

export async function roleIdsOfUser(db: Queryable, userId: string): Promise<string[]> {
  return db('users_roles').where({ user_id: userId }).pluck('role_id');
}

/** Whether any user holds the role. */
export async function roleHasUsers(db: Queryable, roleId: string): Promise<boolean> {
  return Boolean(await db('users_roles').where({ role_id: roleId }).first());
}

/** The User roles every new user is given. */
export async function defaultUserRoleIds(db: Queryable): Promise<string[]> {
  return db('roles').where({ type: 'User', is_default: true }).pluck<string[]>('id');
}

export async function userIdsOfRole(db: Queryable, roleId: string): Promise<string[]> {
  return db('users_roles').where({ role_id: roleId }).pluck('user_id');
}

export async function addUserRoles(db: Queryable, pairs: Array<{ userId: string; roleId: string }>): Promise<void> {
  if (pairs.length > 0) {
    await db('users_roles').insert(pairs.map((pair) => ({ user_id: pair.userId, role_id: pair.roleId })));
    await bumpCacheVersion(db, 'roles');
  }
}

export async function removeUserRoles(db: Queryable, userId: string, roleIds: string[]): Promise<number> {
  const removed = await db('users_roles').where({ user_id: userId }).whereIn('role_id', roleIds).delete();
  await bumpCacheVersion(db, 'roles');
  return removed;
}

type Holders = {
  users: { id: string; name: string | null; avatar: string | null };
  applications: { id: string; name: string; type: string };
};

/** Who holds each of the roles (for Logto's `usersCount`/`featuredUsers` and their application twins). */
export async function holdersOfRoles<K extends keyof Holders>(
  db: Queryable,
  kind: K,
  roleIds: string[],
): Promise<Map<string, Array<Holders[K]>>> {
  type Holder = Holders[K];
  const [link, key, columns] =
    kind === 'users'
      ? (['users_roles', 'user_id', ['users.id', 'users.name', 'users.avatar']] as const)
      : ([
          'applications_roles',
          'application_id',
          ['applications.id', 'applications.name', 'applications.type'],
        ] as const);
  const rows = await db(link)
    .join(kind, `${kind}.id`, `${link}.${key}`)
    .whereIn(`${link}.role_id`, roleIds)
    .select<Array<Record<string, string | null>>>(`${link}.role_id`, ...columns);
  const byRole = new Map<string, Holder[]>();
  for (const { role_id: roleId, ...holder } of rows) {
    byRole.set(String(roleId), [...(byRole.get(String(roleId)) ?? []), holder as unknown as Holder]);
  }
  return byRole;
}
