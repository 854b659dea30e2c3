import type { Queryable } from '../storage/database.ts';

/*
 * Which scopes a subject holds: one statement across the link tables of roles/, organizations/ and
 * resources/ (the token endpoint runs it on every cache miss), so it lives in permissions/, below all three.
 */

export async function readApplicationScopes(
  db: Queryable,
  applicationId: string,
  resourceId: string,
): Promise<string[]> {
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
