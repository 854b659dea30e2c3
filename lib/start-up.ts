import type { Knex } from 'knex';

import { purgeExpiredVerifications } from './account/verification-queries.ts';
import { type Config, configWarnings } from './config/env.ts';
import { syncConsoleApplication } from './console/console-app.ts';
import { offerSetupToken } from './console/first-run.ts';
import { purgeExpiredStates } from './experience/state-queries.ts';
import { pruneEventLog } from './hooks/event-log.ts';
import { purgeFailures } from './http/failure-throttle.ts';
import type { Logger, NoticeStream } from './http/logger.ts';
import { ensureBootstrapAdmin, syncManagementApiIndicator } from './management/bootstrap.ts';
import { ensureKeys, pruneRetiredKeys } from './oidc/keys/keys.ts';
import { pruneRevokedTokens } from './oidc/tokens/revoked-tokens.ts';
import { purgeExpiredModels } from './sessions/queries.ts';
import { migrateToLatest, migrationsFromNewerRelease } from './storage/migrate.ts';
import { checkSecretKeys } from './storage/sealed-columns.ts';

// The steps `createService` (app.ts) runs around assembling the service, in the order it runs
// them: connect to the database → `onDatabase` → the readiness check → `logConfigWarnings` → the
// shared cache and tracing → the app, the webhook dispatcher and `housekeepingTasks` → `listen`
// binds the port → `afterListening` → ready. With several workers (lib/workers.ts) only the first
// runs `onDatabase`, `logConfigWarnings` and `afterListening`: they are done once per start.

/** What the steps work on; `notices` takes what is shown to the operator once, not logged. */
export type StartingService = { config: Config; db: Knex; logger: Logger; notices: NoticeStream };

/** In order, on a database that answers; the first to throw stops the start before anything is served. */
export const onDatabase: ((service: StartingService) => Promise<void>)[] = [
  // First: every later step, and the service, reads the tables as this release shapes them.
  async ({ db }) => {
    await migrateToLatest(db);
  },
  // Not a reason to stop: during a rolling upgrade the older instances run on the newer schema.
  async ({ db, logger }) => {
    const newer = await migrationsFromNewerRelease(db);
    if (newer.length > 0) {
      logger.warn(
        { migrations: newer },
        'the database has migrations of a newer release: this instance runs on them during a rolling upgrade, then upgrade it too',
      );
    }
  },
  // A secret sealed with a key not given stops the start here, not at the first token request.
  ({ db }) => checkSecretKeys(db),
  // First start: the provider, built next, signs with these.
  ({ db }) => ensureKeys(db),
  // Rows that follow ENDPOINT and MANAGEMENT_API_RESOURCE, which may have changed since the last start.
  ({ db, config }) => syncManagementApiIndicator(db, config.managementApiResource),
  ({ db, config }) => syncConsoleApplication(db, config.endpoint),
];

/** Said once the database is up: a start refused for a reason of its own prints that reason alone. */
export function logConfigWarnings({ config, logger }: StartingService): void {
  for (const { setting, message } of configWarnings(config)) {
    logger.warn({ setting }, message);
  }
}

/**
 * In order, once `listen` holds its port: the secrets they show the operator once (generated
 * credentials, the console's setup token) are shown only by a start that got it. Until they are
 * done, the readiness check answers 'starting': a request could find what they make missing.
 */
export const afterListening: ((service: StartingService) => Promise<void>)[] = [
  ({ db, config, notices }) => ensureBootstrapAdmin(db, config, notices),
  ({ db, config, notices }) => offerSetupToken(db, config, notices),
];

export const housekeepingInterval = 10 * 60 * 1000;

/** Run together every `housekeepingInterval`: each deletes what has expired, so a failed one catches up next time. */
export const housekeepingTasks: ((service: StartingService) => Promise<unknown>)[] = [
  ({ db }) => purgeExpiredModels(db),
  ({ db }) => pruneRetiredKeys(db),
  ({ db }) => purgeExpiredStates(db),
  ({ db }) => purgeExpiredVerifications(db),
  ({ db }) => pruneRevokedTokens(db),
  ({ db, config }) => purgeFailures(db, config.clientAuthThrottle.windowSeconds),
  ({ db, config }) => pruneEventLog(db, Date.now() - config.hooksEventRetentionMs),
];
