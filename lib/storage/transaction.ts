import { setTimeout as sleep } from 'node:timers/promises';

import type { Knex } from 'knex';

import { isMysql, type Queryable } from './database.ts';

/**
 * Errors after which the database has rolled the whole transaction back and running it again is
 * safe: MySQL's deadlock victim and lock wait timeout, SQLite's busy database (another process held
 * its write lock longer than `busy_timeout`).
 */
function isRetryable(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return (
    code === 'ER_LOCK_DEADLOCK' ||
    code === 'ER_LOCK_WAIT_TIMEOUT' ||
    (typeof code === 'string' && code.startsWith('SQLITE_BUSY'))
  );
}

const attempts = 5;
/** The first retry waits up to this long, each next one up to twice as long: jitter spreads colliders apart. */
const firstBackoffMs = 20;

/**
 * Runs `work` in one transaction and commits it, running it again (a bounded number of times, after
 * a random pause) when the database ended it as a deadlock victim, after a lock wait timeout, or busy.
 * `work` may run more than once: it must do nothing outside the transaction that cannot be repeated.
 *
 * On SQLite the transaction takes the database's write lock before `work` reads anything: a read
 * first would give it a snapshot that another process may write past, which SQLite cannot upgrade
 * to a write. On MySQL, a read meant for a change locks its rows (`forUpdate()`).
 *
 * Inside another transaction it runs as a savepoint of it: the outermost one retries.
 */
export async function withTransaction<T>(db: Queryable, work: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
  if ((db as Partial<Knex.Transaction>).isTransaction) {
    return db.transaction(work);
  }
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.transaction(async (trx) => {
        if (!isMysql(trx)) {
          // A write that changes nothing: BEGIN IMMEDIATE, which knex cannot issue.
          await trx.raw('update cache_versions set version = version where 0');
        }
        return work(trx);
      });
    } catch (error) {
      if (!isRetryable(error) || attempt >= attempts) {
        throw error;
      }
      await sleep(Math.random() * firstBackoffMs * 2 ** (attempt - 1));
    }
  }
}
