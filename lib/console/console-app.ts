import type { Knex } from 'knex';

import { findApplication, updateApplication } from '../applications/queries.ts';
import { consoleApp } from '../shared/console-ids.ts';
import { lockCache } from '../storage/shared-cache.ts';
import { withTransaction } from '../storage/transaction.ts';

/** Where the console is served (lib/console/pages.ts), for ENDPOINT. */
export const consoleUrl = (endpoint: string) => `${endpoint}/console`;

export const consoleRedirectUri = (endpoint: string) => `${consoleUrl(endpoint)}/callback`;

/**
 * The console application's redirect URIs follow ENDPOINT, set at every start (as the management
 * API's indicator is). The application itself, seeded by migration 0009, cannot be deleted through
 * the API.
 */
export async function syncConsoleApplication(db: Knex, endpoint: string): Promise<void> {
  const oidcClientMetadata = {
    redirectUris: [consoleRedirectUri(endpoint)],
    postLogoutRedirectUris: [consoleUrl(endpoint)],
  };
  await withTransaction(db, async (trx) => {
    // Instances starting together: one checks and updates at a time.
    await lockCache(trx, 'applications');
    const current = await findApplication(trx, consoleApp.applicationId);
    if (!current) {
      throw new Error(`the console application ${consoleApp.applicationId} is missing (migration 0009 makes it)`);
    }
    const wanted = { ...current.oidcClientMetadata, ...oidcClientMetadata };
    if (JSON.stringify(current.oidcClientMetadata) !== JSON.stringify(wanted)) {
      await updateApplication(trx, { ...current, oidcClientMetadata: wanted });
    }
  });
}
