import type { Knex } from 'knex';

import { tenantId } from '../shared/tenant.ts';
import type { Queryable } from '../storage/database.ts';
import { anyJsonObject, jsonColumn } from '../storage/json-column.ts';
import { listPage, type Page, whereContains } from '../storage/list.ts';
import { type Search, whereSearch } from '../storage/search.ts';
import { bumpCacheVersion } from '../storage/shared-cache.ts';
import { type Organization, organizationBrandingSchema, organizationColorSchema } from './schemas.ts';

type OrganizationRow = {
  id: string;
  name: string;
  description: string | null;
  custom_data: string;
  is_mfa_required: number | boolean;
  /** JSON; null in rows written before these columns (migration 0016), read as `{}`. */
  color: string | null;
  branding: string | null;
  custom_css: string | null;
  created_at: number;
};

const customDataOf = jsonColumn('organizations', 'custom_data', anyJsonObject);
const colorOf = jsonColumn('organizations', 'color', organizationColorSchema);
const brandingOf = jsonColumn('organizations', 'branding', organizationBrandingSchema);

const toOrganization = (row: OrganizationRow): Organization => ({
  tenantId,
  id: row.id,
  name: row.name,
  description: row.description,
  customData: customDataOf(row.custom_data),
  isMfaRequired: Boolean(row.is_mfa_required),
  color: row.color === null ? {} : colorOf(row.color),
  branding: row.branding === null ? {} : brandingOf(row.branding),
  customCss: row.custom_css,
  createdAt: row.created_at,
});

export async function insertOrganization(db: Queryable, organization: Organization): Promise<void> {
  await db('organizations').insert({
    id: organization.id,
    name: organization.name,
    description: organization.description,
    custom_data: JSON.stringify(organization.customData),
    is_mfa_required: organization.isMfaRequired,
    color: JSON.stringify(organization.color),
    branding: JSON.stringify(organization.branding),
    custom_css: organization.customCss,
    created_at: organization.createdAt,
  });
}

export async function findOrganization(db: Queryable, id: string): Promise<Organization | undefined> {
  const row = await db('organizations').where({ id }).first<OrganizationRow | undefined>();
  return row && toOrganization(row);
}

/** The organization, its row locked until the transaction ends: read so before changing it or what it links. */
export async function findOrganizationForUpdate(trx: Knex.Transaction, id: string): Promise<Organization | undefined> {
  const row = await trx('organizations').where({ id }).forUpdate().first<OrganizationRow | undefined>();
  return row && toOrganization(row);
}

/** What an organization search covers: Logto's parameters (`search`) and its `q` (`keyword`, plain text, contained). */
export const organizationSearchColumns = { id: 'id', name: 'name', description: 'description' } as const;

export type OrganizationFilter = { ids?: string[]; search?: Search; keyword?: string };

export async function listOrganizations(
  db: Queryable,
  filter: OrganizationFilter,
  page: Page,
): Promise<{ items: Organization[]; total: number }> {
  const query = db('organizations').select('*');
  if (filter.ids) {
    query.whereIn('id', filter.ids);
  }
  if (filter.search) {
    whereSearch(db, query, filter.search, organizationSearchColumns);
  }
  if (filter.keyword) {
    whereContains(query, Object.values(organizationSearchColumns), filter.keyword);
  }
  const { rows, total } = await listPage<OrganizationRow>(query, page);
  return { items: rows.map(toOrganization), total };
}

export async function updateOrganization(db: Queryable, organization: Organization): Promise<void> {
  await db('organizations')
    .where({ id: organization.id })
    .update({
      name: organization.name,
      description: organization.description,
      custom_data: JSON.stringify(organization.customData),
      is_mfa_required: organization.isMfaRequired,
      color: JSON.stringify(organization.color),
      branding: JSON.stringify(organization.branding),
      custom_css: organization.customCss,
    });
}

/** Memberships, member roles, JIT settings and invitations go with it (foreign keys cascade). */
export async function deleteOrganization(db: Queryable, id: string): Promise<boolean> {
  const deleted = await db('organizations').where({ id }).delete();
  // Its members' organization roles went with it: held scopes change.
  await bumpCacheVersion(db, 'roles');
  return deleted > 0;
}

export type FeaturedUser = { id: string; avatar: string | null; name: string | null };

/** Member counts and the first few members of each organization, for the list's `showFeatured`. */
export async function featuredMembers(
  db: Queryable,
  organizationIds: string[],
  featured = 3,
): Promise<Map<string, { usersCount: number; featuredUsers: FeaturedUser[] }>> {
  const counts = await db('organization_users')
    .whereIn('organization_id', organizationIds)
    .groupBy('organization_id')
    .select<Array<{ organization_id: string; count: number | string }>>('organization_id', db.raw('count(*) as count'));
  const result = new Map<string, { usersCount: number; featuredUsers: FeaturedUser[] }>();
  for (const { organization_id: organizationId, count } of counts) {
    const featuredUsers = await db('organization_users')
      .join('users', 'users.id', 'organization_users.user_id')
      .where('organization_users.organization_id', organizationId)
      .orderBy([{ column: 'users.created_at', order: 'desc' }, { column: 'users.id' }])
      .limit(featured)
      .select<FeaturedUser[]>('users.id', 'users.avatar', 'users.name');
    result.set(organizationId, { usersCount: Number(count), featuredUsers });
  }
  return result;
}
