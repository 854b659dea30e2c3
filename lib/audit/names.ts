import { listApplications } from '../applications/queries.ts';
import { listHooks } from '../hooks/queries.ts';
import { listOrganizations } from '../organizations/queries.ts';
import { findOrganizationRolesByIds, findOrganizationScopesByIds } from '../organizations/roles/role-queries.ts';
import { findResourcesByIds, findScopesByIds } from '../resources/queries.ts';
import { findRolesByIds } from '../roles/queries.ts';
import { listSsoConnectors } from '../sso/queries.ts';
import type { Queryable } from '../storage/database.ts';
import type { SharedCache } from '../storage/shared-cache.ts';
import { findUsersByIds } from '../users/queries.ts';

/**
 * The current names of the given ids (users by username, else name, email or phone; other entities
 * by their name), for the people reading the log. An id of something since deleted has none.
 */
export async function currentNames(db: Queryable, cache: SharedCache, ids: string[]): Promise<Map<string, string>> {
  const names = new Map<string, string>();
  if (ids.length === 0) {
    return names;
  }
  const all = { offset: 0 };
  const named: Array<Array<{ id: string; name: string | null }>> = await Promise.all([
    findUsersByIds(db, ids).then((users) =>
      users.map((user) => ({
        id: user.id,
        name: user.username ?? user.name ?? user.primaryEmail ?? user.primaryPhone,
      })),
    ),
    listApplications(db, { ids }, all).then(({ items }) => items),
    findRolesByIds(db, ids),
    findResourcesByIds(db, ids),
    findScopesByIds(db, ids),
    listOrganizations(db, { ids }, all).then(({ items }) => items),
    findOrganizationRolesByIds(db, ids),
    findOrganizationScopesByIds(db, ids),
    // There are few hooks, and their list has no filter by id.
    listHooks(db, all).then(({ items }) => items),
    listSsoConnectors(db, cache).then((connectors) =>
      connectors.map((connector) => ({ id: connector.id, name: connector.connectorName })),
    ),
  ]);
  const wanted = new Set(ids);
  for (const { id, name } of named.flat()) {
    if (name && wanted.has(id)) {
      names.set(id, name);
    }
  }
  return names;
}
