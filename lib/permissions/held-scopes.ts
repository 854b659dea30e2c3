import type { Queryable } from '../storage/database.ts';
import type { SharedCache } from '../storage/shared-cache.ts';

/**
 * The one permission model: which scope names a subject holds on an API resource. Answers are
 * cached under `roles`, which every change to roles, their scopes, their holders and organization
 * roles bumps, so the next token request after a change sees it.
 */

export const scopesHeldByApplication = (db: Queryable, cache: SharedCache, applicationId: string, resourceId: string) =>
  cache.get('roles', `application:${applicationId}:${resourceId}`, () =>
    readApplicationScopes(db, applicationId, resourceId),
  );

/**
 * A user holds a scope through a role of theirs, or through an organization role they hold in an
 * organization. With `organizationId`, only that organization's roles count (an organization token).
 */
export const scopesHeldByUser = (
  db: Queryable,
  cache: SharedCache,
  userId: string,
  resourceId: string,
  organizationId?: string,
) =>
  cache.get('roles', `user:${userId}:${resourceId}:${organizationId ?? ''}`, () =>
    readUserScopes(db, userId, resourceId, organizationId),
  );

async function readApplicationScopes(db: Queryable, applicationId: string, resourceId: string): Promise<string[]> {
  return db('applications_roles')
    .join('roles_scopes', 'roles_scopes.role_id', 'applications_roles.role_id')
    .join('scopes', 'scopes.id', 'roles_scopes.scope_id')
    .where('applications_roles.application_id', applicationId)
    .where('scopes.resource_id', resourceId)
    .distinct()
    .pluck('scopes.name');
}

export async function readUserScopes(
  db: Queryable,
  userId: string,
  resourceId: string,
  organizationId?: string,
): Promise<string[]> {
  const throughOrganizations = db('organization_user_roles')
    .join(
      'organization_role_resource_scopes',
      'organization_role_resource_scopes.organization_role_id',
      'organization_user_roles.organization_role_id',
    )
    .join('scopes', 'scopes.id', 'organization_role_resource_scopes.scope_id')
    .where('organization_user_roles.user_id', userId)
    .where('scopes.resource_id', resourceId)
    .modify((query) => {
      if (organizationId !== undefined) {
        query.where('organization_user_roles.organization_id', organizationId);
      }
    })
    .select('scopes.name');
  if (organizationId !== undefined) {
    return [...new Set(await throughOrganizations.pluck<string[]>('scopes.name'))].sort();
  }
  const throughRoles = db('users_roles')
    .join('roles_scopes', 'roles_scopes.role_id', 'users_roles.role_id')
    .join('scopes', 'scopes.id', 'roles_scopes.scope_id')
    .where('users_roles.user_id', userId)
    .where('scopes.resource_id', resourceId)
    .select('scopes.name');
  const rows = (await throughRoles.union(throughOrganizations)) as Array<{ name: string }>;
  return rows.map(({ name }) => name).sort();
}
