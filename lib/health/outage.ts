import type { Middleware } from 'koa';

import { answerDatabaseGone } from '../http/database-gone.ts';
import type { Logger } from '../http/logger.ts';
import { isConnectionLost, isDatabaseGone } from '../storage/database.ts';

/** At most this many tries of a read: every connection a full pool holds, lost, and then a fresh one. */
const readAttempts = 11;

/**
 * `read` again while it meets a connection that was lost: the server restarted, or dropped it idle
 * (wait_timeout, pg_terminate_backend, a failover), while the pool still held it. knex discards each
 * such connection, so a later try takes a fresh one; a database that is gone refuses the fresh one
 * (an error that is not a lost connection), and that ends the tries. Only for reads, which are safe
 * to run again.
 */
async function onLiveConnection(read: () => Promise<unknown>): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await read();
      return;
    } catch (error) {
      if (!isConnectionLost(error) || attempt >= readAttempts) {
        throw error;
      }
    }
  }
}

/** How often a database that is gone is asked whether it is back. */
const probeIntervalMs = 1000;

/**
 * Whether this instance's database is gone, known to every part that meets it (requests, readiness,
 * webhook deliveries and jobs): the first failure that says so (for a lost connection: once a fresh
 * one fails too) logs the outage, once, and from then on `probe` (a read of a table, as a Galera node out of the cluster refuses those but may answer
 * `select 1`) runs every second until it succeeds, which logs the return, once. Meanwhile requests
 * are answered 503 at once instead of each waiting for a connection that will not come.
 */
export class DatabaseOutage {
  #since: number | undefined;
  #timer: NodeJS.Timeout | undefined;
  #probing = false;
  #confirming = false;

  private readonly logger: Logger;
  private readonly probe: () => Promise<unknown>;

  constructor(logger: Logger, probe: () => Promise<unknown>) {
    this.logger = logger;
    this.probe = probe;
  }

  get down(): boolean {
    return this.#since !== undefined;
  }

  /**
   * Whether `error` says the database is gone. If so, the outage is reported here: the caller
   * answers 503, or tries again on its next round, without a log line of its own.
   */
  noteFailure(error: unknown): boolean {
    if (!isDatabaseGone(error)) {
      return false;
    }
    if (this.#since === undefined) {
      if (isConnectionLost(error)) {
        // One connection the server closed says little of the others: the outage begins only if a
        // fresh connection fails too (the background writers meet such connections first).
        void this.#confirm(error);
      } else {
        this.#begin(error);
      }
    }
    return true;
  }

  #begin(error: unknown): void {
    if (this.#since !== undefined) {
      return;
    }
    this.#since = Date.now();
    this.logger.warn(
      { reason: 'database_unavailable', err: error },
      'database unavailable: answering 503 until it answers again',
    );
    this.#timer = setInterval(() => void this.#probeOnce(), probeIntervalMs);
    this.#timer.unref();
  }

  async #confirm(error: unknown): Promise<void> {
    if (this.#confirming) {
      return;
    }
    this.#confirming = true;
    try {
      await onLiveConnection(this.probe);
    } catch {
      this.#begin(error);
    } finally {
      this.#confirming = false;
    }
  }

  /** The database answered (the readiness check's read, or the probe's). */
  noteAnswer(): void {
    if (this.#since === undefined) {
      return;
    }
    this.logger.info({ downForMs: Date.now() - this.#since }, 'database available again');
    this.#since = undefined;
    this.close();
  }

  close(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  async #probeOnce(): Promise<void> {
    if (this.#probing) {
      return;
    }
    this.#probing = true;
    try {
      await this.probe();
      this.noteAnswer();
    } catch {
      // Still gone: the next round asks again.
    } finally {
      this.#probing = false;
    }
  }

  /**
   * Before the routes: while the database is gone every request is answered 503 at once; otherwise
   * `before` (the cache's version read, the first query of every request, tried again on a fresh
   * connection when it met a lost one) and the routes run, and a failure of either that says the
   * database is gone begins the outage and is answered 503.
   */
  gate(before: () => Promise<void>): Middleware {
    return async (ctx, next) => {
      if (this.down) {
        answerDatabaseGone(ctx);
        return;
      }
      try {
        await onLiveConnection(before);
        await next();
      } catch (error) {
        if (!this.noteFailure(error)) {
          throw error;
        }
        answerDatabaseGone(ctx);
      }
    };
  }
}
