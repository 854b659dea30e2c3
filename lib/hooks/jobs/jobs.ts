import type { Knex } from 'knex';

import { generateId } from '../../storage/ids.ts';
import { withTransaction } from '../../storage/transaction.ts';
import { insertDeliveries, requeueDeliveries } from '../delivery/delivery-queries.ts';
import { countEventsIn, type Cursor, listEventsIn } from '../event-log-queries.ts';
import type { HookEvent } from '../events.ts';
import { deliveriesOf, notifyAfter } from '../outbox.ts';
import { findHook } from '../queries.ts';
import type { Hook } from '../schemas.ts';
import {
  advanceJob,
  type ClaimedJob,
  claimJob,
  insertJob,
  type Job,
  type JobKind,
  lockClaimedJob,
} from './job-queries.ts';
import { countFailedIn, listFailedIn } from './recovery-queries.ts';

/**
 * Recover (re-queue a hook's failed deliveries created in a window, with their webhook-ids) and
 * replay (send a hook again every logged event of a window it subscribes to, as new deliveries),
 * as background jobs. Each batch runs in one transaction that first locks the job row under the
 * runner's claim, reads the cursor there, does its work and advances the cursor: a batch is done
 * once whatever happens, by whichever runner holds the job.
 */

export type Window = { since: number; until: number };

/** Rows handled per transaction: progress moves in steps this size. */
export const jobBatchSize = 500;

const eventWindow = (hook: Pick<Hook, 'events'>, job: Window) => ({
  since: job.since,
  until: job.until,
  events: hook.events,
});

/** A new running job, written in the caller's transaction; `total` is counted now (an estimate until done). */
export async function createJob(trx: Knex.Transaction, hook: Hook, kind: JobKind, window: Window): Promise<Job> {
  const total =
    kind === 'recover'
      ? await countFailedIn(trx, { hookId: hook.id, ...window })
      : await countEventsIn(trx, eventWindow(hook, window));
  const job: Job = { id: generateId(), hookId: hook.id, kind, status: 'running', ...window, total, done: 0 };
  await insertJob(trx, job, Date.now());
  notifyJobRunnersAfter(trx);
  return job;
}

/** Claims a job nobody holds, or none. */
export async function claimNextJob(db: Knex, leaseMs: number, now = Date.now()): Promise<ClaimedJob | undefined> {
  return withTransaction(db, (trx) => claimJob(trx, generateId(), now, leaseMs));
}

/**
 * One batch of a claimed job: 'more' when rows may be left, 'finished' when the job is done,
 * 'lost' when another runner holds it now (its lease ran out) or it is gone with its hook.
 */
export async function runJobBatch(
  db: Knex,
  claimed: ClaimedJob,
  leaseMs: number,
  batch = jobBatchSize,
): Promise<'more' | 'finished' | 'lost'> {
  return withTransaction(db, async (trx) => {
    const job = await lockClaimedJob(trx, claimed);
    const hook = job && (await findHook(trx, job.hookId));
    if (!job || !hook) {
      return 'lost';
    }
    const now = Date.now();
    const { cursor, handled } =
      job.kind === 'recover' ? await recoverBatch(trx, job, now, batch) : await replayBatch(trx, job, hook, now, batch);
    const finished = handled < batch;
    await advanceJob(trx, job, { cursor, handled, finished, leaseUntil: now + leaseMs, now });
    if (handled > 0) {
      notifyAfter(trx);
    }
    return finished ? 'finished' : 'more';
  });
}

type BatchResult = { cursor?: Cursor; handled: number };

async function recoverBatch(trx: Knex.Transaction, job: Job, now: number, batch: number): Promise<BatchResult> {
  const failed = await listFailedIn(trx, { hookId: job.hookId, since: job.since, until: job.until }, job.cursor, batch);
  if (failed.length > 0) {
    await requeueDeliveries(
      trx,
      failed.map(({ id }) => id),
      now,
    );
  }
  return { cursor: failed.at(-1), handled: failed.length };
}

async function replayBatch(
  trx: Knex.Transaction,
  job: Job,
  hook: Hook,
  now: number,
  batch: number,
): Promise<BatchResult> {
  const events = await listEventsIn(trx, eventWindow(hook, job), job.cursor, batch);
  const subscription = [{ hookId: hook.id, payload: hook.payload, excludeApplicationIds: hook.excludeApplicationIds }];
  const deliveries = events.flatMap((logged) =>
    deliveriesOf(
      subscription,
      logged.event as HookEvent,
      logged.createdAt,
      JSON.parse(logged.payload) as Record<string, unknown>,
      logged.payload,
    ),
  );
  if (deliveries.length > 0) {
    await insertDeliveries(trx, deliveries, now);
  }
  const last = events.at(-1);
  return { cursor: last && { at: last.createdAt, id: last.id }, handled: events.length };
}

const runners = new Set<() => void>();

/** A job runner in this process listens: it takes a job created here at once instead of at its next poll. */
export function onJobCreated(listener: () => void): () => void {
  runners.add(listener);
  return () => runners.delete(listener);
}

function notifyJobRunnersAfter(trx: Knex.Transaction): void {
  let outer = trx;
  while (outer.parentTransaction) {
    outer = outer.parentTransaction;
  }
  outer.executionPromise.then(
    () => runners.forEach((listener) => setImmediate(listener)),
    () => undefined,
  );
}
