import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';

// Fixed ids (lib/shared/console-ids.ts names them). The application's redirect URIs follow ENDPOINT: start-up sets them.
const consoleIds = { applicationId: 'console', roleId: 'console-admin' };
const managementApiScopeId = 'management-api-all';

/**
 * The admin console: its first-party SPA application, and the User role that makes a user an
 * administrator by granting the management API's `all` scope (the management API refuses to give
 * that scope to a User role, so only this seed can).
 */
export async function up(db: Knex): Promise<void> {
  const now = Date.now();
  await db('applications').insert({
    id: consoleIds.applicationId,
    name: 'Admin console',
    description: "The service's own admin console at /console.",
    type: 'SPA',
    // Every application has one (Logto's shape); a public client never uses it.
    secret: randomBytes(24).toString('base64url'),
    oidc_client_metadata: JSON.stringify({ redirectUris: [], postLogoutRedirectUris: [] }),
    custom_client_metadata: JSON.stringify({}),
    custom_data: JSON.stringify({}),
    is_third_party: false,
    created_at: now,
  });
  await db('roles').insert({
    id: consoleIds.roleId,
    name: 'Console administrator',
    description:
      'Administrators of this service: grants the management API scope `all` to users (the admin console signs them in).',
    type: 'User',
    is_default: false,
    created_at: now,
  });
  await db('roles_scopes').insert({ role_id: consoleIds.roleId, scope_id: managementApiScopeId });
  await db('cache_versions').whereIn('name', ['applications', 'roles']).increment('version', 1);
}

export async function down(db: Knex): Promise<void> {
  await db('roles').where({ id: consoleIds.roleId }).delete();
  await db('applications').where({ id: consoleIds.applicationId }).delete();
}
