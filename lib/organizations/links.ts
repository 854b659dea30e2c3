import type { LinkStore } from '../http/api/link-set-routes.ts';
import type { Queryable } from '../storage/database.ts';
import { listPage, type Page } from '../storage/list.ts';
import { bumpCacheVersion, type CacheName } from '../storage/shared-cache.ts';

/**
 * The rows of a link table that belong to one owner: `owner` fixes some columns (the organization,
 * the member), `column` holds the linked ids. Every organization relation is one of these. Links
 * that decide which scopes someone holds name the cache of those answers (`roles`, read by
 * lib/permissions), bumped in the same transaction as any change.
 */
export type Links = { table: string; owner: Record<string, string>; column: string; cache?: CacheName };

// Ids per statement: SQLite allows 32766 bound values in one, and an inserted row here binds at most 3.
const chunk = 500;

export const organizationLinks = {
  users: (organizationId: string): Links => ({
    table: 'organization_users',
    owner: { organization_id: organizationId },
    column: 'user_id',
    cache: 'roles',
  }),
  userRoles: (organizationId: string, userId: string): Links => ({
    table: 'organization_user_roles',
    owner: { organization_id: organizationId, user_id: userId },
    column: 'organization_role_id',
    cache: 'roles',
  }),
  applications: (organizationId: string): Links => ({
    table: 'organization_applications',
    owner: { organization_id: organizationId },
    column: 'application_id',
    cache: 'roles',
  }),
  applicationRoles: (organizationId: string, applicationId: string): Links => ({
    table: 'organization_application_roles',
    owner: { organization_id: organizationId, application_id: applicationId },
    column: 'organization_role_id',
    cache: 'roles',
  }),
  jitEmailDomains: (organizationId: string): Links => ({
    table: 'organization_jit_email_domains',
    owner: { organization_id: organizationId },
    column: 'email_domain',
  }),
  jitRoles: (organizationId: string): Links => ({
    table: 'organization_jit_roles',
    owner: { organization_id: organizationId },
    column: 'organization_role_id',
  }),
  jitSsoConnectors: (organizationId: string): Links => ({
    table: 'organization_jit_sso_connectors',
    owner: { organization_id: organizationId },
    column: 'sso_connector_id',
  }),
  roleScopes: (roleId: string): Links => ({
    table: 'organization_role_scopes',
    owner: { organization_role_id: roleId },
    column: 'organization_scope_id',
    cache: 'roles',
  }),
  roleResourceScopes: (roleId: string): Links => ({
    table: 'organization_role_resource_scopes',
    owner: { organization_role_id: roleId },
    column: 'scope_id',
    cache: 'roles',
  }),
  invitationRoles: (invitationId: string): Links => ({
    table: 'organization_invitation_roles',
    owner: { organization_invitation_id: invitationId },
    column: 'organization_role_id',
  }),
};

export async function linkedIds(db: Queryable, links: Links): Promise<string[]> {
  return db(links.table).where(links.owner).pluck(links.column);
}

/** One page of the linked ids, in their order, and how many there are. */
export async function pageOfLinkedIds(
  db: Queryable,
  links: Links,
  page: Page,
): Promise<{ ids: string[]; total: number }> {
  const query = db(links.table).where(links.owner).select(links.column);
  const { rows, total } = await listPage<Record<string, string>>(query, page, [{ column: links.column }]);
  return { ids: rows.map((row) => row[links.column]), total };
}

/** Which of `ids` are linked. */
export async function linkedAmong(db: Queryable, links: Links, ids: string[]): Promise<string[]> {
  const linked: string[] = [];
  for (let start = 0; start < ids.length; start += chunk) {
    linked.push(
      ...(await db(links.table)
        .where(links.owner)
        .whereIn(links.column, ids.slice(start, start + chunk))
        .pluck<string[]>(links.column)),
    );
  }
  return linked;
}

/**
 * Links the ids not linked yet (Logto ignores existing links) and returns them. The caller has
 * checked that every id exists, within the same transaction.
 */
export async function addLinks(db: Queryable, links: Links, ids: string[]): Promise<string[]> {
  const unique = [...new Set(ids)];
  const held = new Set(await linkedAmong(db, links, unique));
  const added = unique.filter((id) => !held.has(id));
  for (let start = 0; start < added.length; start += chunk) {
    // A concurrent request may link the same id between the read above and this insert: not an error.
    await db(links.table)
      .insert(added.slice(start, start + chunk).map((id) => ({ ...links.owner, [links.column]: id })))
      .onConflict([...Object.keys(links.owner), links.column])
      .ignore();
  }
  if (added.length > 0 && links.cache) {
    await bumpCacheVersion(db, links.cache);
  }
  return added;
}

/** Unlinks the given ids; returns how many were linked. */
export async function removeLinks(db: Queryable, links: Links, ids: string[]): Promise<number> {
  let removed = 0;
  for (let start = 0; start < ids.length; start += chunk) {
    removed += await db(links.table)
      .where(links.owner)
      .whereIn(links.column, ids.slice(start, start + chunk))
      .delete();
  }
  if (removed > 0 && links.cache) {
    await bumpCacheVersion(db, links.cache);
  }
  return removed;
}

/** A link table as the store of a link set (lib/http/api/link-set-routes.ts). */
export const linkStore = <Parent>(links: (parent: Parent) => Links): LinkStore<Parent> => ({
  ids: (db, parent) => linkedIds(db, links(parent)),
  add: (trx, parent, ids) => addLinks(trx, links(parent), ids),
  remove: (trx, parent, ids) => removeLinks(trx, links(parent), ids),
});
