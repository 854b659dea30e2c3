import type { Knex } from 'knex';

import { buildApplication } from '../applications/applications.ts';
import { findApplication, insertApplication, updateApplication } from '../applications/queries.ts';

/** Rows seeded by migration 0009. */
export const consoleApp = {
  applicationId: 'console',
  /** The User role that makes a user an administrator (it grants the management API's `all`). */
  roleId: 'console-admin',
} as const;

export const consoleRedirectUri = (endpoint: string) => `${endpoint}/console/callback`;

/**
 * The console application's redirect URIs follow ENDPOINT, set at every start (as the management
 * API's indicator is). An application deleted through the API is made again: the console needs it.
 */
export async function syncConsoleApplication(db: Knex, endpoint: string): Promise<void> {
  const oidcClientMetadata = { redirectUris: [consoleRedirectUri(endpoint)], postLogoutRedirectUris: [`${endpoint}/console`] };
  await db.transaction(async (trx) => {
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
