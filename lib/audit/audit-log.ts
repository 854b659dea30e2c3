import type { Knex } from 'knex';

import type { Logger } from '../http/logger.ts';
import { generateId } from '../storage/ids.ts';

/** Logto's log payload: what happened, to whom, through which application. Never a token or secret. */
export type LogPayload = {
  result: 'Success' | 'Error';
  error?: { error: string; error_description?: string } | string;
  ip?: string;
  userAgent?: string;
  userId?: string;
  applicationId?: string;
  params?: Record<string, unknown>;
};

type Row = { id: string; key: string; payload: string; user_id: string | null; application_id: string | null; created_at: number };

/**
 * The audit log, written in batches off the request path: a token request only appends to memory;
 * a timer inserts what accumulated (at most `flushMs` later) in one statement. `close` flushes.
 */
export class AuditLog {
  #pending: Row[] = [];
  #timer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Knex,
    private readonly logger: Logger,
    private readonly flushMs = 100,
  ) {}

  record(key: string, payload: LogPayload): void {
    this.#pending.push({
      id: generateId(),
      key,
      payload: JSON.stringify({ key, ...payload }),
      user_id: payload.userId ?? null,
      application_id: payload.applicationId ?? null,
      created_at: Date.now(),
    });
    this.#timer ??= setTimeout(() => void this.flush(), this.flushMs);
  }

  flush(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const batch = this.#pending.splice(0);
    this.#flushing = this.#flushing.then(async () => {
      for (let start = 0; start < batch.length; start += 500) {
        try {
          await this.db('logs').insert(batch.slice(start, start + 500));
        } catch (error) {
          this.logger.error({ err: error, entries: batch.length }, 'audit log write failed');
        }
      }
    });
    return this.#flushing;
  }
}
