import type { Knex } from 'knex';

import { findApplication, updateApplication } from '../applications/queries.ts';
import { consoleApp } from '../shared/console-ids.ts';
import { lockCache } from '../storage/shared-cache.ts';
import { withTransaction } from '../storage/transaction.ts';

/** Where the console is served (lib/console/pages.ts), for ENDPOINT. */
export const consoleUrl = (endpoint: string) => `${endpoint}/console`;

export const consoleRedirectUri = (endpoint: string) => `${consoleUrl(endpoint)}/callback`;

/**
 * The console application's redirect URIs include ENDPOINT's, added at every start. Those of the
 * other ENDPOINTs started on this database stay: an instance started with another one must not
 * take the console sign-in from one still running (docs/decisions.md). The application itself,
 * seeded by migration 0009, cannot be deleted through the API.
 */
/** The URIs of the 20 ENDPOINTs started last, the current one last. */
const latest = (uris: string[]) => [...new Set(uris.reverse())].reverse().slice(-20);

export async function syncConsoleApplication(db: Knex, endpoint: string): Promise<void> {
  await withTransaction(db, async (trx) => {
    // Instances starting together: one checks and updates at a time.
    await lockCache(trx, 'applications');
    const current = await findApplication(trx, consoleApp.applicationId);
    if (!current) {
      throw new Error(`the console application ${consoleApp.applicationId} is missing (migration 0009 makes it)`);
    }
    const { redirectUris, postLogoutRedirectUris } = current.oidcClientMetadata;
    const wanted = {
      ...current.oidcClientMetadata,
      redirectUris: latest([...redirectUris, consoleRedirectUri(endpoint)]),
      postLogoutRedirectUris: latest([...postLogoutRedirectUris, consoleUrl(endpoint)]),
    };
    if (JSON.stringify(current.oidcClientMetadata) !== JSON.stringify(wanted)) {
      await updateApplication(trx, { ...current, oidcClientMetadata: wanted });
    }
  });
}
