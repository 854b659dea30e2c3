import { STATUS_CODES } from 'node:http';
import type { Knex } from 'knex';

import { isForeignKeyViolation } from '../../storage/database.ts';
import { generateId, generateTimeOrderedId } from '../../storage/ids.ts';
import { withTransaction } from '../../storage/transaction.ts';
import { disableHook, listHookIds } from '../queries.ts';
import type { Hook } from '../schemas.ts';
import { type Attempt, deleteAttemptsBefore, insertAttempts } from './attempt-queries.ts';
import {
  type ClaimedDelivery,
  countInFlight,
  deleteFinishedDeliveriesBefore,
  type DueDelivery,
  lockDueDeliveries,
  markDelivering,
  type Settled,
  settleDeliveries,
} from './delivery-queries.ts';
import { type DispatchState, lockDispatchStates, setFailingSince, setRateNextAt } from './dispatch-queries.ts';
import { type DisabledHook, disabledReasons, failedTooLong, failingSinceAfter } from './endpoint-health.ts';
import { nextAllowedAt, rateAllowance, rateNextAfter } from './hook-rate-limit.ts';
import type { Outcome } from './retry.ts';
import type { SendResult } from './send.ts';

/**
 * Up to `room` deliveries for each hook, each claimed until `now + leaseMs`, within the hook's
 * settings (its rate limit, its ordering) and `maxInFlight`, the deliveries of one hook in flight
 * from all dispatchers together.
 */
export type Claim = {
  rooms: Map<string, number>;
  hooks: Map<string, Pick<Hook, 'ordering' | 'rateLimitPerSecond'>>;
  maxInFlight: number;
  leaseMs: number;
  now: number;
};

/** What a round claimed, and when a hook its rate limit held back may be claimed again. */
export type Claimed = { claimed: ClaimedDelivery[]; rateFreeAt?: number };

/** How attempts move a hook's health on: after how long a run of failures disables it. */
export type HealthPolicy = { disableAfterSeconds: number };

/** What recording attempts did: for each, whether its claim still held; the hooks it disabled. */
export type Recorded = { kept: boolean[]; disabled: DisabledHook[] };

const hookIdsOf = (records: AttemptRecord[], claim?: Claim) => [
  ...records.map(({ delivery }) => delivery.hookId),
  ...(claim ? claim.rooms.keys() : []),
];

/**
 * Claims due deliveries (pending and due, or delivering with an expired lease), up to `room` for each
 * hook, marking them delivering until `now + leaseMs`. Each hook's dispatch row is locked first, so
 * its in-flight count and rate limiter hold across every dispatcher on the database (on MySQL rows
 * are locked; on SQLite the transaction holds the database's write lock from its start).
 */
export async function claimDeliveries(db: Knex, claim: Claim): Promise<Claimed> {
  return withTransaction(db, async (trx) => claimDue(trx, claim, await lockDispatchStates(trx, hookIdsOf([], claim))));
}

async function claimDue(
  trx: Knex.Transaction,
  { rooms, hooks, maxInFlight, leaseMs, now }: Claim,
  states: Map<string, DispatchState>,
): Promise<Claimed> {
  const picked: DueDelivery[] = [];
  let rateFreeAt: number | undefined;
  for (const [hookId, room] of rooms) {
    const state = states.get(hookId);
    const hook = hooks.get(hookId);
    // A hook without its dispatch row (created this instant) waits for the next round.
    if (!state || !hook || room <= 0) {
      continue;
    }
    const rate = hook.rateLimitPerSecond;
    const byRate = rate === null ? Infinity : rateAllowance(rate, state.rateNextAt, now);
    const allowed = Math.min(room, maxInFlight - (await countInFlight(trx, hookId, now)), byRate);
    const due = allowed > 0 ? await lockDueDeliveries(trx, hookId, now, allowed, hook.ordering === 'per-entity') : [];
    if (rate !== null && due.length > 0) {
      await setRateNextAt(trx, hookId, rateNextAfter(rate, state.rateNextAt, now, due.length));
    }
    // The rate held the hook back: the dispatcher looks again when it lets the next one go.
    if (rate !== null && due.length === byRate) {
      const next = rateNextAfter(rate, state.rateNextAt, now, due.length);
      rateFreeAt = Math.min(rateFreeAt ?? Infinity, nextAllowedAt(rate, next, now));
    }
    picked.push(...due);
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
  return {
    claimed: picked.map(({ attempts, ...delivery }) => ({ ...delivery, attempt: attempts + 1, claimId })),
    rateFreeAt,
  };
}

/**
 * A dispatcher's round in one transaction (one commit): records the attempts finished since the
 * last round (as `recordAttempts`), then claims (as `claimDeliveries`). The dispatch rows of every
 * hook concerned are locked first, in one ordered statement.
 */
export async function recordAndClaim(
  db: Knex,
  records: AttemptRecord[],
  claim: Claim,
  health: HealthPolicy,
): Promise<Recorded & Claimed> {
  try {
    return await withTransaction(db, async (trx) => {
      const states = await lockDispatchStates(trx, hookIdsOf(records, claim));
      const recorded =
        records.length > 0 ? await settleAttempts(trx, records, states, health) : { kept: [], disabled: [] };
      return { ...recorded, ...(await claimDue(trx, claim, states)) };
    });
  } catch (caught) {
    if (!isForeignKeyViolation(caught) || records.length === 0) {
      throw caught;
    }
    // A hook was deleted meanwhile: its attempts cannot be logged, the others are, one by one.
    const recorded = await recordAttempts(db, records, health);
    return { ...recorded, ...(await claimDeliveries(db, claim)) };
  }
}

/** got's wording (Logto's client) for an answer that is not a success. */
const responseError = (statusCode: number | undefined) =>
  statusCode === undefined ? 'No response.' : `Response code ${statusCode} (${STATUS_CODES[statusCode] ?? 'Unknown'})`;

export type AttemptRecord = { delivery: ClaimedDelivery; result: SendResult; outcome: Outcome; now: number };

/**
 * Logs attempts and moves their deliveries on, all in one transaction: one statement for the
 * attempts, one for each group of deliveries that end alike (usually: all succeeded at their first
 * attempt); then each hook's health (a 410, or failing for too long, disables it). `kept` says, for
 * each, whether the claim still held (false: the lease had run out and another dispatcher claimed
 * it, or the hook was deleted meanwhile).
 */
export async function recordAttempts(db: Knex, records: AttemptRecord[], health: HealthPolicy): Promise<Recorded> {
  try {
    return await withTransaction(db, async (trx) =>
      settleAttempts(trx, records, await lockDispatchStates(trx, hookIdsOf(records)), health),
    );
  } catch (caught) {
    if (!isForeignKeyViolation(caught)) {
      throw caught;
    }
    // A hook was deleted meanwhile (its deliveries with it): record the others one by one.
    if (records.length === 1) {
      return { kept: [false], disabled: [] };
    }
    const recorded: Recorded = { kept: [], disabled: [] };
    for (const record of records) {
      const one = await recordAttempts(db, [record], health);
      recorded.kept.push(...one.kept);
      recorded.disabled.push(...one.disabled);
    }
    return recorded;
  }
}

/** `recordAttempts` in the caller's transaction, the hooks' dispatch rows locked. */
async function settleAttempts(
  trx: Knex.Transaction,
  records: AttemptRecord[],
  states: Map<string, DispatchState>,
  health: HealthPolicy,
): Promise<Recorded> {
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
  return {
    kept: records.map(({ delivery }) => kept.has(delivery.id)),
    disabled: await settleHealth(trx, records, states, health),
  };
}

/** Moves each hook's run of failures on, and disables the hooks that answered 410 or failed too long. */
async function settleHealth(
  trx: Knex.Transaction,
  records: AttemptRecord[],
  states: Map<string, DispatchState>,
  { disableAfterSeconds }: HealthPolicy,
): Promise<DisabledHook[]> {
  const byHook = new Map<string, AttemptRecord[]>();
  for (const record of records) {
    byHook.set(record.delivery.hookId, [...(byHook.get(record.delivery.hookId) ?? []), record]);
  }
  const disabled: DisabledHook[] = [];
  for (const [hookId, attempts] of byHook) {
    const gone = attempts.some(({ outcome }) => outcome.status === 'failed' && outcome.disableHook);
    const state = states.get(hookId);
    const failingSince = state
      ? failingSinceAfter(
          state.failingSince,
          attempts.map(({ now, outcome }) => ({ at: now, succeeded: outcome.status === 'succeeded' })),
        )
      : null;
    if (state && failingSince !== state.failingSince) {
      await setFailingSince(trx, hookId, failingSince);
    }
    const last = Math.max(...attempts.map(({ now }) => now));
    const reason = gone
      ? disabledReasons.gone
      : failedTooLong(failingSince, last, disableAfterSeconds)
        ? disabledReasons.failing(disableAfterSeconds)
        : undefined;
    if (reason !== undefined && (await disableHook(trx, hookId, reason))) {
      disabled.push({ hookId, reason });
    }
  }
  return disabled;
}

const attemptError = (result: SendResult, outcome: Outcome) =>
  outcome.status === 'succeeded' ? undefined : (result.error ?? responseError(result.statusCode));

const attemptOf = ({ delivery, result, outcome, now }: AttemptRecord): Attempt => ({
  // In the order they are made: the primary key's tree grows at its end instead of anywhere.
  id: generateTimeOrderedId(),
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

/**
 * Drops attempts and finished deliveries older than `before`, hook by hook (the indexes lead with
 * the hook), a batch at a time (short locks).
 */
export async function pruneDeliveries(db: Knex, before: number, batch = 1000): Promise<number> {
  let removed = 0;
  for (const hookId of await listHookIds(db)) {
    for (;;) {
      const attempts = await deleteAttemptsBefore(db, hookId, before, batch);
      const deliveries = await deleteFinishedDeliveriesBefore(db, hookId, before, batch);
      removed += attempts.deleted + deliveries.deleted;
      if (attempts.found < batch && deliveries.found < batch) {
        break;
      }
    }
  }
  return removed;
}
