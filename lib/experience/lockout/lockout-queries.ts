import type { Knex } from 'knex';

import type { Queryable } from '../../storage/database.ts';

/* `sentinel_activities`: the run of failed verifications against a target, and its lock. */

export type SentinelRow = { target: string; failures: number; locked_until: number | null };

export async function findSentinelRow(db: Queryable, target: string): Promise<SentinelRow | undefined> {
  return db('sentinel_activities').where({ target }).first<SentinelRow | undefined>();
}

/**
 * Counts one failure and returns the row after it. One upsert takes the row's write lock at once (an
 * insert-then-update would let two first failures share a read lock and deadlock on MySQL):
 * concurrent failures count one after the other.
 */
export async function countFailure(trx: Knex.Transaction, target: string, now: number): Promise<SentinelRow> {
  await trx('sentinel_activities')
    .insert({ target, failures: 1, locked_until: null, updated_at: now })
    .onConflict('target')
    .merge({ failures: trx.raw('?? + 1', ['sentinel_activities.failures']), updated_at: now });
  return trx('sentinel_activities').where({ target }).first<SentinelRow>();
}

/** Locks the target until `lockedUntil` and starts its count again. */
export async function lockTarget(trx: Knex.Transaction, target: string, lockedUntil: number): Promise<void> {
  await trx('sentinel_activities').where({ target }).update({ failures: 0, locked_until: lockedUntil });
}

/** Forgets the target's failures unless it is locked at `now`; false when there was nothing to forget or it is locked. */
export async function deleteUnlockedTarget(db: Queryable, target: string, now: number): Promise<boolean> {
  const deleted = await db('sentinel_activities')
    .where({ target })
    .where((unlocked) => {
      unlocked.whereNull('locked_until').orWhere('locked_until', '<=', now);
    })
    .delete();
  return deleted > 0;
}

/** Admin unlock: forgets failures and locks of the given targets. */
export async function clearTargets(db: Queryable, targets: string[]): Promise<number> {
  return db('sentinel_activities').whereIn('target', targets).delete();
}
