import type { Queryable } from '../storage/database.ts';
import type { SharedCache } from '../storage/shared-cache.ts';

/**
 * The scope names an application holds on a resource through its (machine-to-machine) roles.
 * Cached under `roles`, which every change to roles, their scopes or their holders bumps, so the
 * next token request after a change sees it.
 */
export const scopesHeldByApplication = (db: Queryable, cache: SharedCache, applicationId: string, resourceId: string) =>
  cache.get('roles', `application:${applicationId}:${resourceId}`, () => readApplicationScopes(db, applicationId, resourceId));

async function readApplicationScopes(db: Queryable, applicationId: string, resourceId: string): Promise<string[]> {
  return db('applications_roles')
    .join('roles_scopes', 'roles_scopes.role_id', 'applications_roles.role_id')
    .join('scopes', 'scopes.id', 'roles_scopes.scope_id')
    .where('applications_roles.application_id', applicationId)
    .where('scopes.resource_id', resourceId)
    .distinct()
    .pluck('scopes.name');
}
