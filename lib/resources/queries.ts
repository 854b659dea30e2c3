import type { Knex } from 'knex';

import { tenantId } from '../shared/tenant.ts';
import type { Queryable } from '../storage/database.ts';
import { listPage, type Page } from '../storage/list.ts';
import { type Search, whereSearch } from '../storage/search.ts';
import { bumpCacheVersion } from '../storage/shared-cache.ts';
import type { Resource, Scope } from './schemas.ts';

type ResourceRow = {
  id: string;
  name: string;
  indicator: string;
  is_default: number | boolean;
  access_token_ttl: number;
  is_exchange_target: number | boolean;
  created_at: number;
};

type ScopeRow = { id: string; resource_id: string; name: string; description: string | null; created_at: number };

const toResource = (row: ResourceRow): Resource => ({
  tenantId,
  id: row.id,
  name: row.name,
  indicator: row.indicator,
  isDefault: Boolean(row.is_default),
  accessTokenTtl: row.access_token_ttl,
  isExchangeTarget: Boolean(row.is_exchange_target),
});

export const toScope = (row: ScopeRow): Scope => ({
  tenantId,
  id: row.id,
  resourceId: row.resource_id,
  name: row.name,
  description: row.description,
  createdAt: row.created_at,
});

export async function insertResource(db: Queryable, resource: Resource & { createdAt: number }): Promise<void> {
  await db('resources').insert({
    id: resource.id,
    name: resource.name,
    indicator: resource.indicator,
    is_default: resource.isDefault,
    access_token_ttl: resource.accessTokenTtl,
    is_exchange_target: resource.isExchangeTarget,
    created_at: resource.createdAt,
  });
  await bumpCacheVersion(db, 'resources');
}

export async function findResource(db: Queryable, id: string): Promise<Resource | undefined> {
  const row = await db('resources').where({ id }).first<ResourceRow | undefined>();
  return row && toResource(row);
}

/** The resource, its row locked until the transaction ends: read so before changing it or its scopes. */
export async function findResourceForUpdate(trx: Knex.Transaction, id: string): Promise<Resource | undefined> {
  const row = await trx('resources').where({ id }).forUpdate().first<ResourceRow | undefined>();
  return row && toResource(row);
}

export async function findResourceByIndicator(db: Queryable, indicator: string): Promise<Resource | undefined> {
  const row = await db('resources').where({ indicator }).first<ResourceRow | undefined>();
  return row && toResource(row);
}

/** Names are not unique: token exchange's `audience` may name a resource, and must name one. */
export async function findResourcesByName(db: Queryable, name: string): Promise<Resource[]> {
  const rows = await db('resources').where({ name }).limit(2).select<ResourceRow[]>();
  return rows.map(toResource);
}

export async function findResourcesByIds(db: Queryable, ids: string[]): Promise<Resource[]> {
  const rows = await db('resources').whereIn('id', ids).select<ResourceRow[]>('*');
  return rows.map(toResource);
}

export async function listResources(db: Queryable, page: Page): Promise<{ items: Resource[]; total: number }> {
  const { rows, total } = await listPage<ResourceRow>(db('resources').select('*'), page);
  return { items: rows.map(toResource), total };
}

export async function updateResource(db: Queryable, resource: Resource): Promise<void> {
  await db('resources').where({ id: resource.id }).update({
    name: resource.name,
    indicator: resource.indicator,
    is_default: resource.isDefault,
    access_token_ttl: resource.accessTokenTtl,
    is_exchange_target: resource.isExchangeTarget,
  });
  await bumpCacheVersion(db, 'resources');
}

/** Sets the resource's indicator; the resources' cache moves only when it changed. */
export async function setResourceIndicator(db: Queryable, id: string, indicator: string): Promise<void> {
  const changed = await db('resources').where({ id }).whereNot({ indicator }).update({ indicator });
  if (changed > 0) {
    await bumpCacheVersion(db, 'resources');
  }
}

/** At most one default resource (used when an authorization request names none). */
export async function setDefaultResource(db: Queryable, id: string, isDefault: boolean): Promise<void> {
  if (isDefault) {
    await db('resources').whereNot({ id }).update({ is_default: false });
  }
  await db('resources').where({ id }).update({ is_default: isDefault });
  await bumpCacheVersion(db, 'resources');
}

export async function deleteResource(db: Queryable, id: string): Promise<boolean> {
  const deleted = await db('resources').where({ id }).delete();
  await bumpCacheVersion(db, 'resources');
  await bumpCacheVersion(db, 'roles');
  return deleted > 0;
}

export async function scopesOfResources(db: Queryable, resourceIds: string[]): Promise<Scope[]> {
  const rows = await db('scopes').whereIn('resource_id', resourceIds).orderBy('created_at').select<ScopeRow[]>('*');
  return rows.map(toScope);
}

/** What Logto's search of a resource's or a role's scopes covers (storage/search.ts). */
export const scopeSearchColumns = { id: 'scopes.id', name: 'scopes.name', description: 'scopes.description' } as const;

export async function listScopes(
  db: Queryable,
  resourceId: string,
  search: Search,
  page: Page,
): Promise<{ items: Scope[]; total: number }> {
  const query = db('scopes').where({ resource_id: resourceId }).select('*');
  whereSearch(db, query, search, scopeSearchColumns);
  const { rows, total } = await listPage<ScopeRow>(query, page);
  return { items: rows.map(toScope), total };
}

export async function findScope(db: Queryable, resourceId: string, id: string): Promise<Scope | undefined> {
  const row = await db('scopes').where({ resource_id: resourceId, id }).first<ScopeRow | undefined>();
  return row && toScope(row);
}

/** The scope, its row locked until the transaction ends: read so before changing it. */
export async function findScopeForUpdate(
  trx: Knex.Transaction,
  resourceId: string,
  id: string,
): Promise<Scope | undefined> {
  const row = await trx('scopes').where({ resource_id: resourceId, id }).forUpdate().first<ScopeRow | undefined>();
  return row && toScope(row);
}

export async function findScopeByName(db: Queryable, resourceId: string, name: string): Promise<Scope | undefined> {
  const row = await db('scopes').where({ resource_id: resourceId, name }).first<ScopeRow | undefined>();
  return row && toScope(row);
}

export async function findScopesByIds(db: Queryable, ids: string[]): Promise<Scope[]> {
  const rows = await db('scopes').whereIn('id', ids).select<ScopeRow[]>('*');
  return rows.map(toScope);
}

export async function insertScope(db: Queryable, scope: Scope): Promise<void> {
  await db('scopes').insert({
    id: scope.id,
    resource_id: scope.resourceId,
    name: scope.name,
    description: scope.description,
    created_at: scope.createdAt,
  });
  await bumpCacheVersion(db, 'resources');
}

export async function updateScope(db: Queryable, scope: Scope): Promise<void> {
  await db('scopes').where({ id: scope.id }).update({ name: scope.name, description: scope.description });
  await bumpCacheVersion(db, 'resources');
  await bumpCacheVersion(db, 'roles');
}

export async function deleteScope(db: Queryable, id: string): Promise<void> {
  await db('scopes').where({ id }).delete();
  await bumpCacheVersion(db, 'resources');
  await bumpCacheVersion(db, 'roles');
}

/** The names of a resource's scopes. */
export async function scopeNamesOfResource(db: Queryable, resourceId: string): Promise<string[]> {
  return db('scopes').where({ resource_id: resourceId }).pluck<string[]>('name');
}

/** The longest access-token lifetime any resource sets, in seconds (0 without resources). */
export async function longestAccessTokenTtl(db: Queryable): Promise<number> {
  const row = await db('resources').max({ ttl: 'access_token_ttl' }).first();
  return Number(row?.ttl ?? 0);
}
