import type { Queryable } from '../storage/database.ts';

/**
 * The scope names an application holds on a resource through its (machine-to-machine) roles.
 * Read live on every token request, so a role change is seen by the next token.
 */
export async function scopesHeldByApplication(db: Queryable, applicationId: string, resourceId: string): Promise<string[]> {
  return db('applications_roles')
    .join('roles_scopes', 'roles_scopes.role_id', 'applications_roles.role_id')
    .join('scopes', 'scopes.id', 'roles_scopes.scope_id')
    .where('applications_roles.application_id', applicationId)
    .where('scopes.resource_id', resourceId)
    .distinct()
    .pluck('scopes.name');
}
