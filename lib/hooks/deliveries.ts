import { STATUS_CODES } from 'node:http';

import type { Knex } from 'knex';

import { isForeignKeyViolation, isMysql, type Queryable } from '../storage/database.ts';
import { generateId } from '../storage/ids.ts';
import { withTransaction } from '../storage/transaction.ts';
import { disableHook, toHook, type HookRow } from './queries.ts';
import type { Hook } from './schemas.ts';
import type { Outcome } from './retry.ts';
import type { SendResult } from './send.ts';

/**
 * The outbox's rows through their life: pending → delivering (claimed under a lease) → succeeded,
 * failed, or pending again for a retry. `attempts` is raised by each claim and fences the claim:
 * a dispatcher whose lease ran out and was claimed again by another cannot overwrite its result.
 */

export type DeliveryStatus = 'pending' | 'delivering' | 'succeeded' | 'failed';

export type ClaimedDelivery = { id: string; hookId: string; event: string; payload: string; attempt: number };

type CandidateRow = { id: string; hook_id: string; event: string; payload: string; attempts: number };

/**
 * The hooks that have deliveries due (with their settings): one indexed probe per hook, however
 * long the backlog. Disabled hooks are included: their due deliveries are failed, not sent.
 */
export async function hooksWithDueDeliveries(db: Knex, now: number): Promise<Hook[]> {
  const rows = await db('hooks')
    .whereExists((due) => {
      due
        .select(db.raw('1'))
        .from('hook_deliveries')
        .whereRaw('?? = ??', ['hook_deliveries.hook_id', 'hooks.id'])
        .where('next_attempt_at', '<=', now);
    })
    .select<HookRow[]>('hooks.*');
  return rows.map((row) => toHook(db, row));
}

/**
 * Claims due deliveries (pending and due, or delivering with an expired lease), up to `room` for each
 * hook, marking them delivering until `now + leaseMs`. On MySQL, rows another dispatcher is claiming
 * are skipped (SKIP LOCKED); on SQLite the transaction holds the database's write lock from its start
 * (withTransaction), so two processes claim one after the other.
 */
export async function claimDeliveries(
  db: Knex,
  { rooms, leaseMs, now }: { rooms: Map<string, number>; leaseMs: number; now: number },
): Promise<ClaimedDelivery[]> {
  return withTransaction(db, async (trx) => {
    const picked: CandidateRow[] = [];
    for (const [hookId, room] of rooms) {
      if (room <= 0) {
        continue;
      }
      const query = trx('hook_deliveries')
        .where({ hook_id: hookId })
        .where('next_attempt_at', '<=', now)
        .orderBy('next_attempt_at')
        .limit(room)
        .select<CandidateRow[]>('id', 'hook_id', 'event', 'payload', 'attempts');
      if (isMysql(db)) {
        query.forUpdate().skipLocked();
      }
      picked.push(...(await query));
    }
    if (picked.length > 0) {
      await trx('hook_deliveries')
        .whereIn(
          'id',
          picked.map(({ id }) => id),
        )
        .update({
          status: 'delivering',
          attempts: trx.raw('attempts + 1'),
          lease_until: now + leaseMs,
          next_attempt_at: now + leaseMs,
          updated_at: now,
        });
    }
    return picked.map((row) => ({
      id: row.id,
      hookId: row.hook_id,
      event: row.event,
      payload: row.payload,
      attempt: row.attempts + 1,
    }));
  });
}

const final = { next_attempt_at: null, lease_until: null };

/** got's wording for an answer that is not a success. */
const responseError = (statusCode: number | undefined) =>
  statusCode === undefined ? 'No response.' : `Response code ${statusCode} (${STATUS_CODES[statusCode] ?? 'Unknown'})`;

export type AttemptRecord = { delivery: ClaimedDelivery; result: SendResult; outcome: Outcome; now: number };

/**
 * Logs attempts and moves their deliveries on, all in one transaction; a 410 also disables its hook.
 * Returns, for each, whether the claim still held (false: the lease had run out and another
 * dispatcher claimed it, or the hook was deleted meanwhile).
 */
export async function recordAttempts(db: Knex, records: AttemptRecord[]): Promise<boolean[]> {
  try {
    return await withTransaction(db, async (trx) => {
      await trx('hook_attempts').insert(records.map(attemptRow));
      const kept: boolean[] = [];
      for (const { delivery, outcome, now, result } of records) {
        const changes =
          outcome.status === 'pending'
            ? { status: 'pending', next_attempt_at: now + outcome.waitMs, lease_until: null }
            : { status: outcome.status, ...final };
        const updated = await trx('hook_deliveries')
          .where({ id: delivery.id, attempts: delivery.attempt, status: 'delivering' })
          .update({ ...changes, last_error: attemptError(result, outcome) ?? null, updated_at: now });
        kept.push(updated > 0);
        if (outcome.status === 'failed' && outcome.disableHook) {
          await disableHook(trx, delivery.hookId);
        }
      }
      return kept;
    });
  } catch (caught) {
    if (!isForeignKeyViolation(caught)) {
      throw caught;
    }
    // A hook was deleted meanwhile (its deliveries with it): record the others one by one.
    if (records.length === 1) {
      return [false];
    }
    const kept: boolean[] = [];
    for (const record of records) {
      kept.push(...(await recordAttempts(db, [record])));
    }
    return kept;
  }
}

const attemptError = (result: SendResult, outcome: Outcome) =>
  outcome.status === 'succeeded' ? undefined : (result.error ?? responseError(result.statusCode));

const attemptRow = ({ delivery, result, outcome, now }: AttemptRecord) => ({
  id: generateId(),
  delivery_id: delivery.id,
  hook_id: delivery.hookId,
  event: delivery.event,
  attempt: delivery.attempt,
  result: outcome.status === 'succeeded' ? 'Success' : 'Error',
  status_code: result.statusCode ?? null,
  response_body: result.body ?? null,
  error: attemptError(result, outcome) ?? null,
  duration_ms: result.durationMs,
  created_at: now,
});

/** A delivery that cannot be sent (its hook was disabled): failed without an attempt. */
export async function failUnsent(
  db: Queryable,
  delivery: ClaimedDelivery,
  reason: string,
  now = Date.now(),
): Promise<void> {
  await db('hook_deliveries')
    .where({ id: delivery.id, attempts: delivery.attempt, status: 'delivering' })
    .update({ status: 'failed', ...final, attempts: delivery.attempt - 1, last_error: reason, updated_at: now });
}

export type DeliveryRow = { id: string; hook_id: string; status: DeliveryStatus; attempts: number };

export async function findDelivery(db: Queryable, hookId: string, id: string): Promise<DeliveryRow | undefined> {
  return db('hook_deliveries')
    .where({ id, hook_id: hookId })
    .first<DeliveryRow | undefined>('id', 'hook_id', 'status', 'attempts');
}

/** A failed delivery goes back in the queue with a fresh retry budget (its webhook-id is kept). */
export async function requeueDelivery(db: Queryable, id: string, now = Date.now()): Promise<boolean> {
  const updated = await db('hook_deliveries').where({ id, status: 'failed' }).update({
    status: 'pending',
    attempts: 0,
    next_attempt_at: now,
    lease_until: null,
    last_error: null,
    updated_at: now,
  });
  return updated > 0;
}

/** Drops attempts and finished deliveries older than `before`, a batch at a time (short locks). */
export async function pruneDeliveries(db: Knex, before: number, batch = 1000): Promise<number> {
  let removed = 0;
  for (;;) {
    const attemptIds = await db('hook_attempts').where('created_at', '<', before).limit(batch).pluck('id');
    if (attemptIds.length > 0) {
      removed += await db('hook_attempts').whereIn('id', attemptIds).delete();
    }
    const deliveryIds = await db('hook_deliveries')
      .whereIn('status', ['succeeded', 'failed'])
      .where('updated_at', '<', before)
      .limit(batch)
      .pluck('id');
    if (deliveryIds.length > 0) {
      removed += await db('hook_deliveries').whereIn('id', deliveryIds).delete();
    }
    if (attemptIds.length < batch && deliveryIds.length < batch) {
      return removed;
    }
  }
}
