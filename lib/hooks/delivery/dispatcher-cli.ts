/**
 * `npm run dispatcher`: the webhook dispatcher alone, with its own connection to DB_URL (the same
 * environment as the service). Any number may run beside the service instances; on SIGTERM or SIGINT
 * it stops claiming, lets requests in flight finish (10 s at most) and exits.
 */
import type { Knex } from 'knex';

import { type Config, ConfigError, loadConfig } from '../../config/env.ts';
import { createLogger } from '../../http/logger.ts';
import { createConnectors } from '../../messages/index.ts';
import { connectDatabase } from '../../storage/database.ts';
import { migrateToLatest } from '../../storage/migrate.ts';
import { checkSecretKeys } from '../../storage/sealed-columns.ts';
import { SharedCache } from '../../storage/shared-cache.ts';
import { Dispatcher } from './dispatcher.ts';

let config: Config;
let db: Knex;
try {
  config = loadConfig();
  db = await connectDatabase(config, (reason) => console.error(`database not reachable yet (${reason}), retrying`));
  await migrateToLatest(db);
  // It signs with the hooks' keys: a key the database needs and this process lacks stops it here.
  await checkSecretKeys(db);
} catch (error) {
  if (error instanceof ConfigError) {
    console.error(error.message);
    process.exit(1);
  }
  throw error;
}

const logger = createLogger(config);
// The audit log reads hook names (lib/audit imports lib/hooks): a dispatcher alone logs and emails
// a disabled hook's notice; the service's own dispatchers also write it to the audit log.
// The cache: the notice email's language and branding come from the sign-in experience.
const cache = new SharedCache(db);
const dispatcher = new Dispatcher({
  db,
  config,
  logger,
  notices: { email: createConnectors(config, db, cache).email },
});
dispatcher.start();
logger.info(
  { retrySchedule: config.hooksRetrySchedule, allowPrivateTargets: config.hooksAllowPrivateTargets },
  'webhook dispatcher started',
);

let stopping = false;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    if (stopping) {
      return;
    }
    stopping = true;
    logger.info({ signal }, 'webhook dispatcher stopping');
    setTimeout(() => process.exit(1), 15_000).unref();
    dispatcher
      .stop()
      .then(() => {
        cache.close();
        return db.destroy();
      })
      .then(
        () => {
          logger.flush();
          process.exit(0);
        },
        (error: unknown) => {
          logger.error({ err: error }, 'webhook dispatcher: shutdown failed');
          process.exit(1);
        },
      );
  });
}
