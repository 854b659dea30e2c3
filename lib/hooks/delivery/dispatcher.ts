import { setTimeout as sleep } from 'node:timers/promises';
import type { Knex } from 'knex';

import type { Config } from '../../config/env.ts';
import type { Logger } from '../../http/logger.ts';
import { webhookAttempts, webhookDeliveryAttempts, webhookDeliveryLatency } from '../../metrics/metrics.ts';
import type { OutageNotes } from '../../storage/database.ts';
import { inSpan } from '../../tracing/spans.ts';
import { onEnqueued } from '../outbox.ts';
import { findHook, hooksWithDueDeliveries, type SigningHook } from '../queries.ts';
import { requestHeaders } from '../signing/signature.ts';
import { type AttemptRecord, pruneDeliveries, recordAndClaim, recordAttempts, type Recorded } from './deliveries.ts';
import { type ClaimedDelivery, failUnsent } from './delivery-queries.ts';
import { ensureDispatchRows } from './dispatch-queries.ts';
import { announceDisabled, type HealthNotices } from './endpoint-health.ts';
import { decideOutcome } from './retry.ts';
import { WebhookSender } from './send.ts';

export type DispatcherConfig = Pick<
  Config,
  'hooksRetrySchedule' | 'hooksAllowPrivateTargets' | 'hooksDisableAfter' | 'hooksConcurrencyPerHook'
>;

export type DispatcherOptions = {
  /** Deliveries in flight in this process, all hooks together. */
  concurrency: number;
  /**
   * Deliveries in flight to one hook from this process; `HOOKS_CONCURRENCY_PER_HOOK` bounds them
   * across every process.
   */
  perHookConcurrency: number;
  /** How long a claim holds a delivery; a dispatcher that dies leaves it to others after this. */
  leaseMs: number;
  /** How often to look for deliveries enqueued elsewhere (other instances) or due for a retry. */
  pollMs: number;
  /**
   * Rounds (one transaction: the attempts finished since the last round recorded, due deliveries
   * claimed) start at least this far apart: under load, the events committed and the requests
   * finished meanwhile are handled together. After a quiet spell the next round starts at once.
   */
  roundIntervalMs: number;
  /** Attempts and finished deliveries are kept this long. */
  retentionMs: number;
  pruneIntervalMs: number;
  /** How long `stop()` waits for requests in flight before it cuts them off. */
  stopTimeoutMs: number;
  /** Per request. */
  timeoutMs: number;
};

export const defaultDispatcherOptions: DispatcherOptions = {
  concurrency: 64,
  perHookConcurrency: 32,
  leaseMs: 60_000,
  pollMs: 500,
  roundIntervalMs: 10,
  retentionMs: 14 * 24 * 60 * 60 * 1000,
  pruneIntervalMs: 10 * 60 * 1000,
  stopTimeoutMs: 10_000,
  timeoutMs: 10_000,
};

/** The `result` label of an attempt in the metrics. */
const attemptResults = { succeeded: 'succeeded', pending: 'retry', failed: 'failed' } as const;

/** The dispatchers running in this process (tests find the service's own here). */
export const activeDispatchers = new Set<Dispatcher>();

/**
 * Delivers the outbox: claims due deliveries in batches, posts them signed, records every attempt,
 * and schedules retries. Any number may run against one database (in each service instance and as
 * `npm run dispatcher`); each delivery is claimed by one at a time. Delivery is at least once: a
 * dispatcher that dies mid-request leaves the delivery to be claimed again when its lease ends.
 */
export class Dispatcher {
  readonly db: Knex;
  /** Counters since start, for logs and tests. */
  readonly stats = { claimed: 0, succeeded: 0, retried: 0, failed: 0 };
  readonly #config: DispatcherConfig;
  readonly #logger: Logger;
  readonly #outage: OutageNotes | undefined;
  readonly #notices: HealthNotices;
  /** Hooks known to have their `hook_dispatch` row. */
  readonly #dispatchRows = new Set<string>();
  readonly #options: DispatcherOptions;
  readonly #sender: WebhookSender;
  /** Deliveries claimed and not yet recorded (stop() waits for them). */
  readonly #inFlight = new Set<Promise<void>>();
  /** Requests under way (all hooks together; `#perHook` by hook). */
  #sending = 0;
  readonly #perHook = new Map<string, number>();

  #running = false;
  #pumping: Promise<void> | undefined;
  #again = false;
  #wakeScheduled = false;
  #roundStartedAt = 0;
  #round = 0;
  #timer: NodeJS.Timeout | undefined;
  #timerAt = Infinity;
  #pruneTimer: NodeJS.Timeout | undefined;
  #unsubscribe: (() => void) | undefined;

  constructor({
    db,
    config,
    logger,
    outage,
    notices = {},
    options = {},
  }: {
    db: Knex;
    config: DispatcherConfig;
    logger: Logger;
    outage?: OutageNotes;
    notices?: HealthNotices;
    options?: Partial<DispatcherOptions>;
  }) {
    this.db = db;
    this.#config = config;
    this.#logger = logger;
    this.#outage = outage;
    this.#notices = notices;
    this.#options = { ...defaultDispatcherOptions, ...options };
    this.#sender = new WebhookSender({
      allowPrivateTargets: config.hooksAllowPrivateTargets,
      timeoutMs: this.#options.timeoutMs,
    });
  }

  get running(): boolean {
    return this.#running;
  }

  start(): void {
    if (this.#running) {
      return;
    }
    this.#running = true;
    activeDispatchers.add(this);
    this.#unsubscribe = onEnqueued(() => this.wake());
    this.#pruneTimer = setInterval(() => void this.prune(), this.#options.pruneIntervalMs);
    this.#pruneTimer.unref();
    this.wake();
  }

  /** Stops claiming, then waits for requests in flight (up to `stopTimeoutMs`, then aborts them). */
  async stop(): Promise<void> {
    if (!this.#running) {
      return;
    }
    this.#running = false;
    this.#unsubscribe?.();
    clearTimeout(this.#timer);
    clearInterval(this.#pruneTimer);
    await this.#pumping;
    // Attempts that finished after the last round are recorded now.
    this.#flushSoon();
    const settled = Promise.allSettled([...this.#inFlight]);
    const timeout = new AbortController();
    const finished = await Promise.race([
      settled.then(() => true),
      sleep(this.#options.stopTimeoutMs, false, { signal: timeout.signal }).catch(() => false),
    ]);
    timeout.abort();
    if (!finished) {
      // Cut off: their attempts are recorded as errors and retried by whoever runs next.
      this.#sender.abort();
      await Promise.race([settled, sleep(2000)]);
    }
    this.#sender.close();
    activeDispatchers.delete(this);
  }

  /**
   * Look for due deliveries soon (after a local commit, a finished request, a timer): calls before
   * the next round starts make one round, no sooner than `roundIntervalMs` after the last one began.
   */
  wake(): void {
    if (!this.#running) {
      return;
    }
    if (this.#pumping) {
      this.#again = true;
      return;
    }
    if (this.#wakeScheduled) {
      return;
    }
    this.#wakeScheduled = true;
    const round = () => {
      this.#wakeScheduled = false;
      if (!this.#running || this.#pumping) {
        return;
      }
      this.#roundStartedAt = Date.now();
      this.#pumping = this.#pump().finally(() => {
        this.#pumping = undefined;
        if (this.#again && this.#running) {
          this.#again = false;
          this.wake();
        }
      });
    };
    const wait = this.#roundStartedAt + this.#options.roundIntervalMs - Date.now();
    if (wait > 0) {
      setTimeout(round, wait);
    } else {
      setImmediate(round);
    }
  }

  async prune(): Promise<number> {
    try {
      return await pruneDeliveries(this.db, Date.now() - this.#options.retentionMs);
    } catch (error) {
      if (!this.#outage?.noteFailure(error)) {
        this.#logger.error({ err: error }, 'webhook dispatcher: pruning failed');
      }
      return 0;
    }
  }

  /**
   * One round, in one transaction: records the attempts finished since the last round, and claims
   * as many due deliveries as each hook's room (and the process's) allows. A finished request or a
   * local commit wakes the next round; the poll timer catches the rest.
   */
  async #pump(): Promise<void> {
    const records = this.#records.splice(0);
    try {
      let room = this.#options.concurrency - this.#sending;
      const now = Date.now();
      const hooks = room > 0 ? await hooksWithDueDeliveries(this.db, now) : [];
      const rooms = new Map<string, number>();
      // Rotated each round: when the process's room is short, no hook is always last.
      const start = this.#round++ % Math.max(1, hooks.length);
      for (const hook of [...hooks.slice(start), ...hooks.slice(0, start)]) {
        const share = Math.min(room, this.#options.perHookConcurrency - (this.#perHook.get(hook.id) ?? 0));
        if (share > 0) {
          rooms.set(hook.id, share);
          room -= share;
        }
      }
      if (rooms.size === 0 && records.length === 0) {
        return;
      }
      const fresh = [...rooms.keys()].filter((id) => !this.#dispatchRows.has(id));
      await ensureDispatchRows(this.db, fresh);
      fresh.forEach((id) => this.#dispatchRows.add(id));
      const byId = new Map(hooks.map((hook) => [hook.id, hook]));
      const claim = {
        rooms,
        hooks: byId,
        maxInFlight: this.#config.hooksConcurrencyPerHook,
        leaseMs: this.#options.leaseMs,
        now,
      };
      const { claimed, rateFreeAt, ...recorded } = await recordAndClaim(this.db, records, claim, this.#health);
      this.#settleRecords(records, recorded);
      if (rateFreeAt !== undefined) {
        this.#wakeAt(rateFreeAt);
      }
      this.stats.claimed += claimed.length;
      for (const delivery of claimed) {
        const hook = byId.get(delivery.hookId);
        if (!hook) {
          throw new Error(`claimed a delivery of hook ${delivery.hookId}, which was not asked for`);
        }
        this.#launch(delivery, hook);
      }
    } catch (error) {
      const failure =
        error instanceof Error ? error : new Error('claiming webhook deliveries failed', { cause: error });
      records.forEach((record) => record.settle(false, failure));
      if (!this.#outage?.noteFailure(error)) {
        this.#logger.error({ err: error }, 'webhook dispatcher: claiming failed');
      }
    } finally {
      if (this.#running) {
        this.#wakeAt(Date.now() + this.#options.pollMs);
      }
    }
  }

  #launch(delivery: ClaimedDelivery, hook: SigningHook): void {
    this.#sending += 1;
    this.#perHook.set(delivery.hookId, (this.#perHook.get(delivery.hookId) ?? 0) + 1);
    let released = false;
    // The request's slot is free once its exchange ends; recording its result is not sending.
    const release = () => {
      if (released) {
        return;
      }
      released = true;
      this.#sending -= 1;
      const left = (this.#perHook.get(delivery.hookId) ?? 1) - 1;
      if (left > 0) {
        this.#perHook.set(delivery.hookId, left);
      } else {
        this.#perHook.delete(delivery.hookId);
      }
      this.wake();
    };
    const task = this.#deliver(delivery, hook, release)
      .catch((error: unknown) => {
        // Its claim's lease runs out and it is sent again, after an outage too.
        if (!this.#outage?.noteFailure(error)) {
          this.#logger.error({ err: error, deliveryId: delivery.id }, 'webhook dispatcher: delivery failed');
        }
      })
      .finally(() => {
        this.#inFlight.delete(task);
        release();
      });
    this.#inFlight.add(task);
  }

  async #deliver(delivery: ClaimedDelivery, hook: SigningHook, release: () => void): Promise<void> {
    if (!hook.enabled) {
      await failUnsent(this.db, delivery, 'The hook is disabled.');
      return;
    }
    const headers = requestHeaders(hook.config, hook, delivery.id, delivery.payload);
    const host = URL.parse(hook.config.url)?.host;
    const attributes = {
      'identity.hook_id': hook.id,
      'identity.delivery_id': delivery.id,
      'identity.event': delivery.event,
      'identity.attempt': delivery.attempt,
      'server.address': host,
    };
    const result = await inSpan('webhook delivery', attributes, async (note) => {
      const sent = await this.#sender.send(hook.config.url, delivery.payload, headers);
      note({
        'http.response.status_code': sent.statusCode,
        'error.type': sent.error === undefined ? undefined : 'no response',
      });
      return sent;
    });
    release();
    const outcome = decideOutcome(result, delivery.attempt, this.#config.hooksRetrySchedule);
    const now = Date.now();
    webhookAttempts.observe({ result: attemptResults[outcome.status] }, result.durationMs / 1000);
    webhookDeliveryAttempts.inc({ hook_id: hook.id, outcome: attemptResults[outcome.status] });
    if (outcome.status === 'succeeded') {
      webhookDeliveryLatency.observe((now - delivery.createdAt) / 1000);
    }
    const kept = await this.#record({ delivery, result, outcome, now });
    if (!kept) {
      this.#logger.warn(
        { deliveryId: delivery.id, attempt: delivery.attempt },
        'webhook dispatcher: claim lost before the result was recorded',
      );
    }
    if (outcome.status === 'succeeded') {
      this.stats.succeeded += 1;
      return;
    }
    // Every failed attempt, for the operator: ids, the target's host (its path and query may hold a
    // token), what came back. Never the payload or the response body.
    const failure = {
      hookId: hook.id,
      deliveryId: delivery.id,
      event: delivery.event,
      attempt: delivery.attempt,
      host,
      statusCode: result.statusCode,
      error: result.error,
    };
    if (outcome.status === 'pending') {
      this.stats.retried += 1;
      this.#wakeAt(now + outcome.waitMs);
      this.#logger.warn(
        { ...failure, retryInSeconds: Math.round(outcome.waitMs / 1000) },
        'webhook delivery attempt failed: will retry',
      );
    } else {
      this.stats.failed += 1;
      this.#logger.warn(
        { ...failure, disabled: outcome.disableHook },
        outcome.disableHook
          ? 'webhook target is gone (410): hook disabled'
          : 'webhook delivery failed: no more retries',
      );
    }
  }

  readonly #records: Array<AttemptRecord & { settle: (kept: boolean, error?: Error) => void }> = [];
  #recording = false;

  /**
   * Attempts are recorded by the next round, in its transaction; once stopped (the last requests
   * finishing), in transactions of their own.
   */
  #record(record: AttemptRecord): Promise<boolean> {
    return new Promise<boolean>((resolve, reject) => {
      this.#records.push({ ...record, settle: (kept, error) => (error === undefined ? resolve(kept) : reject(error)) });
      if (this.#running) {
        this.wake();
      } else {
        this.#flushSoon();
      }
    });
  }

  get #health() {
    return { disableAfterSeconds: this.#config.hooksDisableAfter };
  }

  /** Answers the attempts' recorders, and announces the hooks their attempts disabled (off the round's path). */
  #settleRecords(records: Array<{ settle: (kept: boolean) => void }>, { kept, disabled }: Recorded): void {
    records.forEach((record, index) => record.settle(kept[index]));
    for (const { hookId, reason } of disabled) {
      void findHook(this.db, hookId).then((hook) =>
        announceDisabled(
          { logger: this.#logger, notices: this.#notices },
          { hookId, reason, hookName: hook?.name ?? '', notifyEmail: hook?.notifyEmail ?? null },
        ),
      );
    }
  }

  #flushSoon(): void {
    if (!this.#recording && this.#records.length > 0) {
      this.#recording = true;
      setImmediate(() => void this.#flushRecords());
    }
  }

  async #flushRecords(): Promise<void> {
    while (this.#records.length > 0) {
      const batch = this.#records.splice(0);
      try {
        this.#settleRecords(batch, await recordAttempts(this.db, batch, this.#health));
      } catch (error) {
        const failure =
          error instanceof Error ? error : new Error('recording webhook attempts failed', { cause: error });
        batch.forEach((record) => record.settle(false, failure));
      }
    }
    this.#recording = false;
  }

  /** One timer, set for the earliest moment something is known to be due. */
  #wakeAt(at: number): void {
    if (!this.#running || at >= this.#timerAt) {
      return;
    }
    clearTimeout(this.#timer);
    this.#timerAt = at;
    this.#timer = setTimeout(
      () => {
        this.#timerAt = Infinity;
        this.wake();
      },
      Math.max(0, at - Date.now()),
    );
  }
}
