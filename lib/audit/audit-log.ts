import type { Knex } from 'knex';

import type { Logger } from '../http/logger.ts';
import { isUniqueViolation, type OutageNotes } from '../storage/database.ts';
import { generateTimeOrderedId } from '../storage/ids.ts';
import {
  insertLogRows,
  insertLogTargetRows,
  type LogPayload,
  type LogRow,
  logRowOf,
  type LogTargetRow,
} from './queries.ts';

/** Entries per insert statement. */
const chunkSize = 100;
/** While the database is gone, entries are tried again this often. */
const outageRetryMs = 1000;

/** A client's user agent is its own text: kept, but not at any length. */
const userAgentLength = 512;

/**
 * The audit log, written in batches off the request path: a token request only appends to memory;
 * a timer inserts what accumulated (at most `flushMs` later) in one statement. `close` flushes.
 */
export class AuditLog {
  #pending: LogRow[] = [];
  #pendingTargets: LogTargetRow[] = [];
  #timer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> = Promise.resolve();

  private readonly db: Knex;
  private readonly logger: Logger;
  private readonly flushMs: number;
  private readonly outage?: OutageNotes;

  constructor(db: Knex, logger: Logger, flushMs = 100, outage?: OutageNotes) {
    this.db = db;
    this.logger = logger;
    this.flushMs = flushMs;
    this.outage = outage;
  }

  /** `targets`: the ids the entry is about (what `GET /api/logs?targetId=` finds it by). */
  record(key: string, payload: LogPayload, targets: string[] = []): void {
    const id = generateTimeOrderedId();
    const userAgent = payload.userAgent?.slice(0, userAgentLength);
    this.#pending.push(logRowOf(id, key, { ...payload, ...(userAgent !== undefined && { userAgent }) }, Date.now()));
    for (const target of new Set(targets)) {
      this.#pendingTargets.push({ log_id: id, target_id: target });
    }
    this.#timer ??= setTimeout(() => void this.flush(), this.flushMs);
  }

  flush(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const batch = this.#pending.splice(0);
    const targets = this.#pendingTargets.splice(0);
    this.#flushing = this.#flushing.then(async () => {
      await this.#insertInChunks(batch, insertLogRows, this.#pending);
      await this.#insertInChunks(targets, insertLogTargetRows, this.#pendingTargets);
    });
    return this.#flushing;
  }

  /**
   * Small statements with the event loop let through between them: on SQLite an insert runs on this
   * thread, and 500 entries at once (what 100 ms of token exchanges under load make) held every
   * request waiting behind them for about 5 ms.
   */
  async #insertInChunks<Row>(
    rows: Row[],
    insert: (db: Knex, rows: Row[]) => Promise<void>,
    pending: Row[],
  ): Promise<void> {
    for (let start = 0; start < rows.length; start += chunkSize) {
      if (start > 0) {
        await new Promise((resolve) => setImmediate(resolve));
      }
      try {
        await insert(this.db, rows.slice(start, start + chunkSize));
      } catch (error) {
        if (isUniqueViolation(error)) {
          // Written before: a chunk kept when its connection was lost may have been committed by
          // then, and the ids are otherwise unique. One statement, so all of it was.
          continue;
        }
        if (this.outage?.noteFailure(error)) {
          // The database is gone (reported once, by the outage): kept for a later flush. Few come
          // meanwhile, as requests are refused until it is back.
          pending.unshift(...rows.slice(start));
          this.#timer ??= setTimeout(() => void this.flush(), outageRetryMs);
          return;
        }
        this.logger.error({ err: error, entries: rows.length }, 'audit log write failed');
      }
    }
  }
}
