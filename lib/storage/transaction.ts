import { setTimeout as sleep } from 'node:timers/promises';
import type { Knex } from 'knex';

import { isSqlite, postgresCodes, type Queryable } from './database.ts';

/**
 * Errors after which the database has rolled the whole transaction back and running it again is
 * safe: MySQL's deadlock victim (and a Galera certification conflict, reported as one at COMMIT or
 * at `select … for update`) and lock wait timeout, PostgreSQL's serialization failure and deadlock
 * victim, SQLite's busy database (another process held its write lock longer than `busy_timeout`).
 */
function isRetryable(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return (
    code === 'ER_LOCK_DEADLOCK' ||
    code === 'ER_LOCK_WAIT_TIMEOUT' ||
    code === postgresCodes.serializationFailure ||
    code === postgresCodes.deadlockDetected ||
    (typeof code === 'string' && code.startsWith('SQLITE_BUSY'))
  );
}

/**
 * Enough for a burst of writers to one row through several Galera nodes, where a writer can lose
 * certification many times running (5 attempts lost writes in about one burst of three, 10 still
 * lost 2 of 100 users created at once through two nodes: each bumps the users cache version).
 */
export const transactionAttempts = 16;
/** The first retry waits up to this long, each next one up to twice as long, never more than the cap. */
const firstBackoffMs = 10;
const maxBackoffMs = 1000;

/**
 * The wait before retry `attempt` (1 for the first): anywhere from 0 to a doubling, capped bound
 * ("full jitter"), so the colliders of one round spread over the whole interval instead of meeting
 * again a fixed time later. At most about 10 s over all the retries, about 5 s on average: only a
 * burst on one row gets that far.
 */
export const retryDelayMs = (attempt: number, random: () => number = Math.random): number =>
  random() * Math.min(maxBackoffMs, firstBackoffMs * 2 ** (attempt - 1));

/**
 * Runs `work` in one transaction and commits it, running it again (a bounded number of times, after
 * a random pause) when the database ended it as a deadlock victim, after a lock wait timeout, on a
 * serialization failure, or busy.
 * `work` may run more than once: it must do nothing outside the transaction that cannot be repeated.
 *
 * On SQLite the transaction takes the database's write lock before `work` reads anything: a read
 * first would give it a snapshot that another process may write past, which SQLite cannot upgrade
 * to a write. On MySQL and PostgreSQL, a read meant for a change locks its rows (`forUpdate()`).
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
        if (isSqlite(trx)) {
          // A write that changes nothing: BEGIN IMMEDIATE, which knex cannot issue.
          await trx.raw('update cache_versions set version = version where 0');
        }
        return work(trx);
      });
    } catch (error) {
      if (!isRetryable(error) || attempt >= transactionAttempts) {
        throw error;
      }
      await sleep(retryDelayMs(attempt));
    }
  }
}
