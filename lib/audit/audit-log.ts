import type { Knex } from 'knex';

import type { Logger } from '../http/logger.ts';
import { generateId } from '../storage/ids.ts';

/**
 * Logto's log payload: what happened, to whom, through which application, from where. Never a token,
 * secret, code or request body: ids, names of fields, error codes.
 */
export type LogPayload = {
  result: 'Success' | 'Error';
  error?: { error: string; error_description?: string } | { code: string } | string;
  ip?: string;
  userAgent?: string;
  userId?: string;
  applicationId?: string;
  sessionId?: string;
  params?: Record<string, unknown>;
  /** Management writes and refused verifications: the HTTP answer. */
  status?: number;
  method?: string;
  /** The route's pattern (`/api/users/:userId`), never the raw path. */
  route?: string;
  createdId?: string;
  /** The names of the request body's fields, never their values. */
  fields?: string[];
  /** The values of the body's id fields only (`userIds`, `roleIds`, `organizationId`). */
  bodyIds?: Record<string, string | string[]>;
  /** The identifier a failed verification was about, as typed (email, phone, username). */
  identifier?: { type: string; value: string };
};

type Row = {
  id: string;
  key: string;
  payload: string;
  user_id: string | null;
  application_id: string | null;
  created_at: number;
};
type TargetRow = { log_id: string; target_id: string };

/** A client's user agent is its own text: kept, but not at any length. */
const userAgentLength = 512;

/**
 * The audit log, written in batches off the request path: a token request only appends to memory;
 * a timer inserts what accumulated (at most `flushMs` later) in one statement. `close` flushes.
 */
export class AuditLog {
  #pending: Row[] = [];
  #pendingTargets: TargetRow[] = [];
  #timer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Knex,
    private readonly logger: Logger,
    private readonly flushMs = 100,
  ) {}

  /** `targets`: the ids the entry is about (what `GET /api/logs?targetId=` finds it by). */
  record(key: string, payload: LogPayload, targets: string[] = []): void {
    const id = generateId();
    const userAgent = payload.userAgent?.slice(0, userAgentLength);
    this.#pending.push({
      id,
      key,
      payload: JSON.stringify({ key, ...payload, ...(userAgent !== undefined && { userAgent }) }),
      user_id: payload.userId ?? null,
      application_id: payload.applicationId ?? null,
      created_at: Date.now(),
    });
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
      for (const [table, rows] of [
        ['logs', batch],
        ['log_targets', targets],
      ] as const) {
        for (let start = 0; start < rows.length; start += 500) {
          try {
            await this.db(table).insert(rows.slice(start, start + 500));
          } catch (error) {
            this.logger.error({ err: error, entries: rows.length }, 'audit log write failed');
          }
        }
      }
    });
    return this.#flushing;
  }
}
