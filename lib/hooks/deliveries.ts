import { STATUS_CODES } from 'node:http';

import type { Knex } from 'knex';

import { isForeignKeyViolation } from '../storage/database.ts';
import { generateId } from '../storage/ids.ts';
import { withTransaction } from '../storage/transaction.ts';
import { deleteAttemptsBefore, insertAttempts, type Attempt } from './attempt-queries.ts';
import {
  deleteFinishedDeliveriesBefore,
  lockDueDeliveries,
  markDelivering,
  settleDeliveries,
  type ClaimedDelivery,
  type DueDelivery,
  type Settled,
} from './delivery-queries.ts';
import { disableHook } from './queries.ts';
import type { Outcome } from './retry.ts';
import type { SendResult } from './send.ts';

/** Up to `room` deliveries for each hook, each claimed until `now + leaseMs`. */
export type Claim = { rooms: Map<string, number>; leaseMs: number; now: number };

/**
 * Claims due deliveries (pending and due, or delivering with an expired lease), up to `room` for each
 * hook, marking them delivering until `now + leaseMs`. On MySQL, rows another dispatcher is claiming
 * are skipped (SKIP LOCKED); on SQLite the transaction holds the database's write lock from its start
 * (withTransaction), so two processes claim one after the other.
 */
export async function claimDeliveries(db: Knex, claim: Claim): Promise<ClaimedDelivery[]> {
  return withTransaction(db, (trx) => claimDue(trx, claim));
}

async function claimDue(trx: Knex.Transaction, { rooms, leaseMs, now }: Claim): Promise<ClaimedDelivery[]> {
  const picked: DueDelivery[] = [];
  for (const [hookId, room] of rooms) {
    if (room > 0) {
      picked.push(...(await lockDueDeliveries(trx, hookId, now, room)));
    }
  }
  // One token for the round's claims: a later claim of any of them has another.
  const claimId = generateId();
  if (picked.length > 0) {
    await markDelivering(
      trx,
      picked.map(({ id }) => id),
      claimId,
      now,
      leaseMs,
    );
  }
  return picked.map(({ attempts, ...delivery }) => ({ ...delivery, attempt: attempts + 1, claimId }));
}

/**
 * A dispatcher's round in one transaction (one commit): records the attempts finished since the
 * last round (as `recordAttempts`), then claims (as `claimDeliveries`). `kept` is, for each record,
 * whether its claim still held.
 */
export async function recordAndClaim(
  db: Knex,
  records: AttemptRecord[],
  claim: Claim,
): Promise<{ kept: boolean[]; claimed: ClaimedDelivery[] }> {
  try {
    return await withTransaction(db, async (trx) => ({
      kept: records.length > 0 ? await settleAttempts(trx, records) : [],
      claimed: await claimDue(trx, claim),
    }));
  } catch (caught) {
    if (!isForeignKeyViolation(caught) || records.length === 0) {
      throw caught;
    }
    // A hook was deleted meanwhile: its attempts cannot be logged, the others are, one by one.
    return { kept: await recordAttempts(db, records), claimed: await claimDeliveries(db, claim) };
  }
}

/** got's wording (Logto's client) for an answer that is not a success. */
const responseError = (statusCode: number | undefined) =>
  statusCode === undefined ? 'No response.' : `Response code ${statusCode} (${STATUS_CODES[statusCode] ?? 'Unknown'})`;

export type AttemptRecord = { delivery: ClaimedDelivery; result: SendResult; outcome: Outcome; now: number };

/**
 * Logs attempts and moves their deliveries on, all in one transaction: one statement for the
 * attempts, one for each group of deliveries that end alike (usually: all succeeded at their first
 * attempt); a 410 also disables its hook. Returns, for each, whether the claim still held (false:
 * the lease had run out and another dispatcher claimed it, or the hook was deleted meanwhile).
 */
export async function recordAttempts(db: Knex, records: AttemptRecord[]): Promise<boolean[]> {
  try {
    return await withTransaction(db, (trx) => settleAttempts(trx, records));
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

/** `recordAttempts` in the caller's transaction. */
async function settleAttempts(trx: Knex.Transaction, records: AttemptRecord[]): Promise<boolean[]> {
  await insertAttempts(trx, records.map(attemptOf));
  const now = Math.max(...records.map((record) => record.now));
  const groups = new Map<string, { ids: string[]; claimId: string; settled: Settled }>();
  for (const { delivery, outcome, now: at, result } of records) {
    const lastError = attemptError(result, outcome) ?? null;
    const settled: Settled =
      outcome.status === 'pending'
        ? { status: 'pending', nextAttemptAt: at + outcome.waitMs, lastError }
        : { status: outcome.status, lastError };
    const key = JSON.stringify([delivery.claimId, settled]);
    const group = groups.get(key);
    if (group) {
      group.ids.push(delivery.id);
    } else {
      groups.set(key, { ids: [delivery.id], claimId: delivery.claimId, settled });
    }
  }
  const kept = new Set<string>();
  for (const { ids, claimId, settled } of groups.values()) {
    for (const id of await settleDeliveries(trx, ids, claimId, settled, now)) {
      kept.add(id);
    }
  }
  for (const { delivery, outcome } of records) {
    if (outcome.status === 'failed' && outcome.disableHook) {
      await disableHook(trx, delivery.hookId);
    }
  }
  return records.map(({ delivery }) => kept.has(delivery.id));
}

const attemptError = (result: SendResult, outcome: Outcome) =>
  outcome.status === 'succeeded' ? undefined : (result.error ?? responseError(result.statusCode));

const attemptOf = ({ delivery, result, outcome, now }: AttemptRecord): Attempt => ({
  id: generateId(),
  deliveryId: delivery.id,
  hookId: delivery.hookId,
  event: delivery.event,
  attempt: delivery.attempt,
  result: outcome.status === 'succeeded' ? 'Success' : 'Error',
  statusCode: result.statusCode ?? null,
  responseBody: result.body ?? null,
  error: attemptError(result, outcome) ?? null,
  durationMs: result.durationMs,
  createdAt: now,
});

/** Drops attempts and finished deliveries older than `before`, a batch at a time (short locks). */
export async function pruneDeliveries(db: Knex, before: number, batch = 1000): Promise<number> {
  let removed = 0;
  for (;;) {
    const attempts = await deleteAttemptsBefore(db, before, batch);
    const deliveries = await deleteFinishedDeliveriesBefore(db, before, batch);
    removed += attempts.deleted + deliveries.deleted;
    if (attempts.found < batch && deliveries.found < batch) {
      return removed;
    }
  }
}
