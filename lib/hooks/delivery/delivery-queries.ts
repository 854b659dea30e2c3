import type { Knex } from 'knex';

import { locksRows, type Queryable } from '../../storage/database.ts';
import { listPage, type Page } from '../../storage/list.ts';

/**
 * The outbox, `hook_deliveries`: pending → delivering (claimed under a lease) → succeeded, failed,
 * or pending again for a retry. `attempts` is raised by each claim; `claim_id`, fresh at each
 * claim, fences it: a dispatcher whose lease ran out and was claimed again by another cannot
 * overwrite its result, even after a resend restarted the attempts at 0.
 */

export const deliveryStatuses = ['pending', 'delivering', 'succeeded', 'failed'] as const;
export type DeliveryStatus = (typeof deliveryStatuses)[number];

/** A delivery to send: `payload` is the JSON exactly as sent and signed, never parsed here. */
export type Delivery = { id: string; hookId: string; event: string; payload: string };

/** A new delivery: the entity its event is about (ordered hooks) and its place in commit order. */
export type NewDelivery = Delivery & { entityId?: string; sequence: number };

/** A delivery due, with the attempts made so far and when its event was committed. */
export type DueDelivery = Delivery & { attempts: number; createdAt: number };

/** A claimed delivery: `attempt` counts from 1, `claimId` is the claim's fencing token. */
export type ClaimedDelivery = Delivery & { attempt: number; claimId: string; createdAt: number };

type DeliveryRow = {
  id: string;
  hook_id: string;
  event: string;
  payload: string;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: number | string | null;
  lease_until: number | string | null;
  last_error: string | null;
  created_at: number | string;
  updated_at: number | string;
};

/** New deliveries, due at once. */
export async function insertDeliveries(db: Queryable, deliveries: NewDelivery[], now: number): Promise<void> {
  await db('hook_deliveries').insert(
    deliveries.map(({ id, hookId, event, payload, entityId, sequence }) => ({
      id,
      hook_id: hookId,
      event,
      payload,
      entity_id: entityId ?? null,
      sequence,
      status: 'pending',
      attempts: 0,
      next_attempt_at: now,
      created_at: now,
      updated_at: now,
    })),
  );
}

/**
 * Up to `limit` of the hook's deliveries due at `now` (pending, or delivering with an expired
 * lease), oldest due first, with the attempts made so far. On MySQL and PostgreSQL they are
 * locked until `trx` ends and rows another transaction holds are skipped (SKIP LOCKED).
 *
 * `ordered` (a per-entity hook): only deliveries no earlier delivery of the same entity waits
 * before (pending, or in flight), so at most one of each entity. Read without SKIP LOCKED, which
 * would let a locked earlier delivery pass for absent: the claimer holds the hook's dispatch row,
 * and every write that moves that hook's deliveries on holds it too.
 */
export async function lockDueDeliveries(
  trx: Knex.Transaction,
  hookId: string,
  now: number,
  limit: number,
  ordered = false,
): Promise<DueDelivery[]> {
  const query = trx('hook_deliveries as due')
    .where('due.hook_id', hookId)
    .where('due.next_attempt_at', '<=', now)
    .orderBy('due.next_attempt_at')
    .limit(limit)
    .select<Array<Pick<DeliveryRow, 'id' | 'hook_id' | 'event' | 'payload' | 'attempts' | 'created_at'>>>(
      'due.id',
      'due.hook_id',
      'due.event',
      'due.payload',
      'due.attempts',
      'due.created_at',
    );
  if (ordered) {
    query.whereNotExists((earlier) => {
      earlier
        .select(trx.raw('1'))
        .from('hook_deliveries as earlier')
        .whereRaw('?? = ??', ['earlier.hook_id', 'due.hook_id'])
        .whereRaw('?? = ??', ['earlier.entity_id', 'due.entity_id'])
        .whereRaw('?? < ??', ['earlier.sequence', 'due.sequence'])
        .whereIn('earlier.status', ['pending', 'delivering']);
    });
  } else if (locksRows(trx)) {
    query.forUpdate().skipLocked();
  }
  return (await query).map((row) => ({
    id: row.id,
    hookId: row.hook_id,
    event: row.event,
    payload: row.payload,
    attempts: row.attempts,
    createdAt: Number(row.created_at),
  }));
}

/** The hook's deliveries claimed and still under lease at `now`, by any dispatcher. */
export async function countInFlight(db: Queryable, hookId: string, now: number): Promise<number> {
  const row = await db('hook_deliveries')
    .where({ hook_id: hookId, status: 'delivering' })
    .where('next_attempt_at', '>', now)
    .count<{ count: number | string }>({ count: '*' })
    .first();
  return Number(row?.count ?? 0);
}

/** Claims the deliveries until `now + leaseMs` under `claimId`, raising their attempts. */
export async function markDelivering(
  trx: Knex.Transaction,
  ids: string[],
  claimId: string,
  now: number,
  leaseMs: number,
): Promise<void> {
  await trx('hook_deliveries')
    .whereIn('id', ids)
    .update({
      status: 'delivering',
      attempts: trx.raw('attempts + 1'),
      claim_id: claimId,
      lease_until: now + leaseMs,
      next_attempt_at: now + leaseMs,
      updated_at: now,
    });
}

/** Where an attempt leaves its delivery: pending with its next attempt, or final (no next attempt). */
export type Settled =
  | { status: 'pending'; nextAttemptAt: number; lastError: string | null }
  | { status: 'succeeded' | 'failed'; lastError: string | null };

/**
 * Ends claims that end alike: deliveries claimed together (one `claimId`), all moved to `settled`,
 * in one statement. Returns the ids whose claim still held (the others' lease had run out and
 * another dispatcher claimed them, or they were deleted with their hook).
 */
export async function settleDeliveries(
  db: Queryable,
  ids: string[],
  claimId: string,
  settled: Settled,
  now: number,
): Promise<string[]> {
  const updated = await db('hook_deliveries')
    .whereIn('id', ids)
    .where({ claim_id: claimId, status: 'delivering' })
    .update({
      status: settled.status,
      next_attempt_at: settled.status === 'pending' ? settled.nextAttemptAt : null,
      lease_until: null,
      last_error: settled.lastError,
      updated_at: now,
    });
  if (updated === ids.length) {
    return ids;
  }
  // Some claims were lost: a delivery claimed again since carries another claim id.
  return db('hook_deliveries')
    .whereIn('id', ids)
    .where({ claim_id: claimId, status: settled.status, updated_at: now })
    .pluck('id');
}

/** A delivery that cannot be sent (its hook was disabled): failed without an attempt. */
export async function failUnsent(
  db: Queryable,
  delivery: ClaimedDelivery,
  reason: string,
  now = Date.now(),
): Promise<void> {
  await db('hook_deliveries')
    .where({ id: delivery.id, claim_id: delivery.claimId, status: 'delivering' })
    .update({
      status: 'failed',
      next_attempt_at: null,
      lease_until: null,
      attempts: delivery.attempt - 1,
      last_error: reason,
      updated_at: now,
    });
}

/** What the console shows of a delivery: never its payload. */
export type DeliveryState = {
  id: string;
  event: string;
  status: DeliveryStatus;
  attempts: number;
  /** When a pending delivery is tried next (a delivering one: when its lease ends); null once final. */
  nextAttemptAt: number | null;
  lastError: string | null;
  createdAt: number;
};

/** A hook's deliveries, newest first, optionally of one status. */
export async function listDeliveries(
  db: Queryable,
  hookId: string,
  status: DeliveryStatus | undefined,
  page: Page,
): Promise<{ items: DeliveryState[]; total: number }> {
  const query = db('hook_deliveries')
    .where({ hook_id: hookId, ...(status ? { status } : {}) })
    .select('id', 'event', 'status', 'attempts', 'next_attempt_at', 'last_error', 'created_at');
  const { rows, total } = await listPage<DeliveryRow>(query, page);
  return {
    items: rows.map((row) => ({
      id: row.id,
      event: row.event,
      status: row.status,
      attempts: row.attempts,
      nextAttemptAt: row.next_attempt_at === null ? null : Number(row.next_attempt_at),
      lastError: row.last_error,
      createdAt: Number(row.created_at),
    })),
    total,
  };
}

export async function findDeliveryStatus(
  db: Queryable,
  hookId: string,
  id: string,
): Promise<DeliveryStatus | undefined> {
  const row = await db('hook_deliveries')
    .where({ id, hook_id: hookId })
    .first<Pick<DeliveryRow, 'status'> | undefined>('status');
  return row?.status;
}

/** Failed deliveries go back in the queue with a fresh retry budget (their webhook-ids are kept): how many did. */
export async function requeueDeliveries(db: Queryable, ids: string[], now = Date.now()): Promise<number> {
  return db('hook_deliveries').whereIn('id', ids).where({ status: 'failed' }).update({
    status: 'pending',
    attempts: 0,
    next_attempt_at: now,
    lease_until: null,
    last_error: null,
    updated_at: now,
  });
}

/**
 * Deletes up to `limit` of the hook's deliveries finished before `before`: how many it found, and
 * how many of those were still there to delete. Read through (hook_id, status, created_at): a
 * delivery finished before `before` was created before it too (no index on updated_at is written
 * for pruning alone).
 */
export async function deleteFinishedDeliveriesBefore(
  db: Queryable,
  hookId: string,
  before: number,
  limit: number,
): Promise<{ found: number; deleted: number }> {
  const ids = await db('hook_deliveries')
    .where({ hook_id: hookId })
    .whereIn('status', ['succeeded', 'failed'])
    .where('created_at', '<', before)
    .where('updated_at', '<', before)
    .limit(limit)
    .pluck('id');
  return { found: ids.length, deleted: ids.length > 0 ? await db('hook_deliveries').whereIn('id', ids).delete() : 0 };
}
