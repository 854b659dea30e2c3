import type { Knex } from 'knex';

import { isForeignKeyViolation, locksRows, type Queryable } from '../../storage/database.ts';

/**
 * `hook_dispatch`: what every dispatcher on the database shares about a hook. Its row is the lock a
 * dispatcher holds while it claims that hook's deliveries or records their attempts, so the
 * in-flight count, the rate limiter and the run of failures are read and changed by one at a time.
 */

export type DispatchState = {
  hookId: string;
  /** The rate limiter's theoretical arrival time of the next delivery (ms); null: never limited yet. */
  rateNextAt: number | null;
  /** The first failed attempt since the last success; null while healthy. */
  failingSince: number | null;
};

type DispatchRow = { hook_id: string; rate_next_at: number | string | null; failing_since: number | string | null };

const nullableNumber = (value: number | string | null) => (value === null ? null : Number(value));

/**
 * Creates the rows of hooks that have none yet (new hooks, imported ones), each in a statement of
 * its own outside any claim: an insert that meets an existing row inside a transaction would hold
 * a shared lock that two claimers could then both wait to upgrade.
 */
export async function ensureDispatchRows(db: Queryable, hookIds: string[]): Promise<void> {
  if (hookIds.length === 0) {
    return;
  }
  try {
    await db('hook_dispatch')
      .insert(hookIds.map((hookId) => ({ hook_id: hookId })))
      .onConflict('hook_id')
      .ignore();
  } catch (caught) {
    if (!isForeignKeyViolation(caught)) {
      throw caught;
    }
    // A hook deleted meanwhile fails the whole insert: the others one by one (the gone one has
    // nothing left to claim).
    if (hookIds.length > 1) {
      for (const hookId of hookIds) {
        await ensureDispatchRows(db, [hookId]);
      }
    }
  }
}

/**
 * Locks the rows of `hookIds` until `trx` ends, in id order (two dispatchers locking overlapping
 * sets cannot wait on each other in a circle), and returns them by hook. On SQLite the transaction
 * holds the database's write lock already.
 */
export async function lockDispatchStates(
  trx: Knex.Transaction,
  hookIds: string[],
): Promise<Map<string, DispatchState>> {
  const states = new Map<string, DispatchState>();
  if (hookIds.length === 0) {
    return states;
  }
  const query = trx('hook_dispatch')
    .whereIn('hook_id', [...new Set(hookIds)].sort())
    .orderBy('hook_id')
    .select<DispatchRow[]>('hook_id', 'rate_next_at', 'failing_since');
  if (locksRows(trx)) {
    query.forUpdate();
  }
  for (const row of await query) {
    states.set(row.hook_id, {
      hookId: row.hook_id,
      rateNextAt: nullableNumber(row.rate_next_at),
      failingSince: nullableNumber(row.failing_since),
    });
  }
  return states;
}

export async function setRateNextAt(db: Queryable, hookId: string, rateNextAt: number): Promise<void> {
  await db('hook_dispatch').where({ hook_id: hookId }).update({ rate_next_at: rateNextAt });
}

export async function setFailingSince(db: Queryable, hookId: string, failingSince: number | null): Promise<void> {
  await db('hook_dispatch').where({ hook_id: hookId }).update({ failing_since: failingSince });
}
