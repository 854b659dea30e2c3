import type { Knex } from 'knex';

import { toScope } from '../../resources/queries.ts';
import type { Scope } from '../../resources/schemas.ts';
import { tenantId } from '../../shared/tenant.ts';
import type { Queryable } from '../../storage/database.ts';
import { listPage, type Page, whereContains } from '../../storage/list.ts';
import { type Search, whereSearch } from '../../storage/search.ts';
import { bumpCacheVersion } from '../../storage/shared-cache.ts';
import type { OrganizationRole, OrganizationRoleType, OrganizationScope } from '../schemas.ts';

// The organization template (roles and scopes) lists alphabetically, as Logto's does.
const byName = [{ column: 'name' }, { column: 'id' }];

type ScopeRow = { id: string; name: string; description: string | null; created_at: number };
type RoleRow = ScopeRow & { type: OrganizationRoleType };

const toOrganizationScope = (row: ScopeRow): OrganizationScope => ({
  tenantId,
  id: row.id,
  name: row.name,
  description: row.description,
});

export const toOrganizationRole = (row: RoleRow): OrganizationRole => ({
  tenantId,
  id: row.id,
  name: row.name,
  description: row.description,
  type: row.type,
});

export async function insertOrganizationScope(db: Queryable, scope: OrganizationScope): Promise<void> {
  await db('organization_scopes').insert({
    id: scope.id,
    name: scope.name,
    description: scope.description,
    created_at: Date.now(),
  });
}

export async function findOrganizationScope(db: Queryable, id: string): Promise<OrganizationScope | undefined> {
  const row = await db('organization_scopes').where({ id }).first<ScopeRow | undefined>();
  return row && toOrganizationScope(row);
}

/** The scope, its row locked until the transaction ends: read so before changing it. */
export async function findOrganizationScopeForUpdate(
  trx: Knex.Transaction,
  id: string,
): Promise<OrganizationScope | undefined> {
  const row = await trx('organization_scopes').where({ id }).forUpdate().first<ScopeRow | undefined>();
  return row && toOrganizationScope(row);
}

export async function findOrganizationScopeByName(db: Queryable, name: string): Promise<OrganizationScope | undefined> {
  const row = await db('organization_scopes').where({ name }).first<ScopeRow | undefined>();
  return row && toOrganizationScope(row);
}

export async function findOrganizationScopesByIds(db: Queryable, ids: string[]): Promise<OrganizationScope[]> {
  const rows = await db('organization_scopes').whereIn('id', ids).select<ScopeRow[]>('*');
  return rows.map(toOrganizationScope);
}

/** What an organization scope or role search covers: Logto's parameters (`search`) and its `q` (`keyword`). */
export const organizationScopeSearchColumns = { id: 'id', name: 'name', description: 'description' } as const;
export const organizationRoleSearchColumns = organizationScopeSearchColumns;

export type ScopeFilter = { ids?: string[]; search?: Search; keyword?: string };

export async function listOrganizationScopes(db: Queryable, filter: ScopeFilter, page: Page) {
  const query = db('organization_scopes').select('*');
  if (filter.ids) {
    query.whereIn('id', filter.ids);
  }
  if (filter.search) {
    whereSearch(db, query, filter.search, organizationScopeSearchColumns);
  }
  if (filter.keyword) {
    whereContains(query, Object.values(organizationScopeSearchColumns), filter.keyword);
  }
  const { rows, total } = await listPage<ScopeRow>(query, page, byName);
  return { items: rows.map(toOrganizationScope), total };
}

export async function updateOrganizationScope(db: Queryable, scope: OrganizationScope): Promise<void> {
  await db('organization_scopes').where({ id: scope.id }).update({ name: scope.name, description: scope.description });
}

/** Roles lose the scope (the link rows cascade), and so do their holders. */
export async function deleteOrganizationScope(db: Queryable, id: string): Promise<boolean> {
  const deleted = await db('organization_scopes').where({ id }).delete();
  await bumpCacheVersion(db, 'roles');
  return deleted > 0;
}

export async function insertOrganizationRole(db: Queryable, role: OrganizationRole): Promise<void> {
  await db('organization_roles').insert({
    id: role.id,
    name: role.name,
    description: role.description,
    type: role.type,
    created_at: Date.now(),
  });
}

export async function findOrganizationRole(db: Queryable, id: string): Promise<OrganizationRole | undefined> {
  const row = await db('organization_roles').where({ id }).first<RoleRow | undefined>();
  return row && toOrganizationRole(row);
}

/** The role, its row locked until the transaction ends: read so before changing it or its scopes. */
export async function findOrganizationRoleForUpdate(
  trx: Knex.Transaction,
  id: string,
): Promise<OrganizationRole | undefined> {
  const row = await trx('organization_roles').where({ id }).forUpdate().first<RoleRow | undefined>();
  return row && toOrganizationRole(row);
}

export async function findOrganizationRoleByName(db: Queryable, name: string): Promise<OrganizationRole | undefined> {
  const row = await db('organization_roles').where({ name }).first<RoleRow | undefined>();
  return row && toOrganizationRole(row);
}

export async function findOrganizationRolesByIds(db: Queryable, ids: string[]): Promise<OrganizationRole[]> {
  const rows = await db('organization_roles').whereIn('id', ids).select<RoleRow[]>('*');
  return rows.map(toOrganizationRole);
}

export async function findOrganizationRolesByNames(db: Queryable, names: string[]): Promise<OrganizationRole[]> {
  const rows = await db('organization_roles').whereIn('name', names).select<RoleRow[]>('*');
  return rows.map(toOrganizationRole);
}

export type RoleFilter = { ids?: string[]; search?: Search; keyword?: string };

export async function listOrganizationRoles(db: Queryable, filter: RoleFilter, page: Page) {
  const query = db('organization_roles').select('*');
  if (filter.ids) {
    query.whereIn('id', filter.ids);
  }
  if (filter.search) {
    whereSearch(db, query, filter.search, organizationRoleSearchColumns);
  }
  if (filter.keyword) {
    whereContains(query, Object.values(organizationRoleSearchColumns), filter.keyword);
  }
  const { rows, total } = await listPage<RoleRow>(query, page, byName);
  return { items: rows.map(toOrganizationRole), total };
}

export async function updateOrganizationRole(db: Queryable, role: OrganizationRole): Promise<void> {
  await db('organization_roles').where({ id: role.id }).update({ name: role.name, description: role.description });
}

/** Members, JIT settings and invitations lose the role (the link rows cascade): held scopes change. */
export async function deleteOrganizationRole(db: Queryable, id: string): Promise<boolean> {
  const deleted = await db('organization_roles').where({ id }).delete();
  await bumpCacheVersion(db, 'roles');
  return deleted > 0;
}

/** The organization scopes of several roles, by role, for the role list. */
export async function scopesOfRoles(
  db: Queryable,
  roleIds: string[],
): Promise<Map<string, Array<{ id: string; name: string }>>> {
  const rows = await db('organization_role_scopes')
    .join('organization_scopes', 'organization_scopes.id', 'organization_role_scopes.organization_scope_id')
    .whereIn('organization_role_scopes.organization_role_id', roleIds)
    .orderBy('organization_scopes.name')
    .select<Array<{ role_id: string; id: string; name: string }>>(
      'organization_role_scopes.organization_role_id as role_id',
      'organization_scopes.id',
      'organization_scopes.name',
    );
  const byRole = new Map<string, Array<{ id: string; name: string }>>();
  for (const { role_id: roleId, ...scope } of rows) {
    byRole.set(roleId, [...(byRole.get(roleId) ?? []), scope]);
  }
  return byRole;
}

type ResourceScopeReference = { id: string; name: string; resource: { id: string; name: string } };

/** The API resource scopes of several roles, by role, with their resource's id and name. */
export async function resourceScopesOfRoles(
  db: Queryable,
  roleIds: string[],
): Promise<Map<string, ResourceScopeReference[]>> {
  const rows = await db('organization_role_resource_scopes')
    .join('scopes', 'scopes.id', 'organization_role_resource_scopes.scope_id')
    .join('resources', 'resources.id', 'scopes.resource_id')
    .whereIn('organization_role_resource_scopes.organization_role_id', roleIds)
    .orderBy([{ column: 'resources.name' }, { column: 'scopes.name' }])
    .select<Array<{ role_id: string; id: string; name: string; resource_id: string; resource_name: string }>>(
      'organization_role_resource_scopes.organization_role_id as role_id',
      'scopes.id',
      'scopes.name',
      'resources.id as resource_id',
      'resources.name as resource_name',
    );
  const byRole = new Map<string, ResourceScopeReference[]>();
  for (const row of rows) {
    const scope = { id: row.id, name: row.name, resource: { id: row.resource_id, name: row.resource_name } };
    byRole.set(row.role_id, [...(byRole.get(row.role_id) ?? []), scope]);
  }
  return byRole;
}

/** The API resource scopes one role grants, in the resources' Scope shape. */
export async function listRoleResourceScopes(
  db: Queryable,
  roleId: string,
  page: Page,
): Promise<{ items: Scope[]; total: number }> {
  const query = db('organization_role_resource_scopes')
    .join('scopes', 'scopes.id', 'organization_role_resource_scopes.scope_id')
    .where('organization_role_resource_scopes.organization_role_id', roleId)
    .select('scopes.*');
  const { rows, total } = await listPage<Parameters<typeof toScope>[0]>(query, page, [
    { column: 'scopes.name' },
    { column: 'scopes.id' },
  ]);
  return { items: rows.map(toScope), total };
}
