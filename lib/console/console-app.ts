import type { Knex } from 'knex';

import { buildApplication } from '../applications/applications.ts';
import { findApplication, insertApplication, updateApplication } from '../applications/queries.ts';
import { managementApi } from '../resources/management-api.ts';
import { bumpCacheVersion, lockCache } from '../storage/shared-cache.ts';

/** Rows seeded by migration 0009. */
export const consoleApp = {
  applicationId: 'console',
  /** The User role that makes a user an administrator (it grants the management API's `all`). */
  roleId: 'console-admin',
} as const;

export const consoleRedirectUri = (endpoint: string) => `${endpoint}/console/callback`;

/**
 * The console application's redirect URIs follow ENDPOINT, set at every start (as the management
 * API's indicator is). The application and the administrator role, deleted through the API, are made
 * again: the console needs both.
 */
export async function syncConsoleApplication(db: Knex, endpoint: string): Promise<void> {
  const oidcClientMetadata = { redirectUris: [consoleRedirectUri(endpoint)], postLogoutRedirectUris: [`${endpoint}/console`] };
  await db.transaction(async (trx) => {
    // Instances starting together: one checks and repairs at a time.
    await lockCache(trx, 'applications');
    if (!(await trx('roles').where({ id: consoleApp.roleId }).first())) {
      await trx('roles').insert({
        id: consoleApp.roleId,
        // The id in the name: another role may have taken the seed's name meanwhile.
        name: `Console administrator (${consoleApp.roleId})`,
        description: 'Administrators of this service: grants the management API scope `all` to users.',
        type: 'User',
        is_default: false,
        created_at: Date.now(),
      });
      await trx('roles_scopes').insert({ role_id: consoleApp.roleId, scope_id: managementApi.scopeId });
      await bumpCacheVersion(trx, 'roles');
    }
    const current = await findApplication(trx, consoleApp.applicationId);
    if (!current) {
      await insertApplication(
        trx,
        buildApplication({ id: consoleApp.applicationId, name: 'Admin console', type: 'SPA', oidcClientMetadata }),
      );
    } else if (JSON.stringify(current.oidcClientMetadata) !== JSON.stringify({ ...current.oidcClientMetadata, ...oidcClientMetadata })) {
      await updateApplication(trx, { ...current, oidcClientMetadata: { ...current.oidcClientMetadata, ...oidcClientMetadata } });
    }
  });
}
