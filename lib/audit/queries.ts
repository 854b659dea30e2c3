import { z } from 'zod';

import type { Queryable } from '../storage/database.ts';
import { jsonColumn } from '../storage/json-column.ts';
import { listPage, type Page, whereStartsWith } from '../storage/list.ts';

/* `logs`, the audit log, and `log_targets`, which indexes each entry by the ids it is about. */

const logPayloadSchema = z.object({
  result: z.enum(['Success', 'Error']),
  error: z
    .union([
      z.object({ error: z.string(), error_description: z.string().optional() }),
      z.object({ code: z.string() }),
      z.string(),
    ])
    .optional(),
  ip: z.string().optional(),
  userAgent: z.string().optional(),
  userId: z.string().optional(),
  applicationId: z.string().optional(),
  sessionId: z.string().optional(),
  params: z.record(z.string(), z.unknown()).optional(),
  /** Management writes and refused verifications: the HTTP answer. */
  status: z.number().optional(),
  method: z.string().optional(),
  /** The route's pattern (`/api/users/:userId`), never the raw path. */
  route: z.string().optional(),
  createdId: z.string().optional(),
  /** The names of the request body's fields, never their values. */
  fields: z.array(z.string()).optional(),
  /** The values of the body's id fields only (`userIds`, `roleIds`, `organizationId`). */
  bodyIds: z.record(z.string(), z.union([z.string(), z.array(z.string())])).optional(),
  /** The identifier a failed verification was about, as typed (email, phone, username). */
  identifier: z.object({ type: z.string(), value: z.string() }).optional(),
});

/**
 * Logto's log payload: what happened, to whom, through which application, from where. Never a token,
 * secret, code or request body: ids, names of fields, error codes.
 */
export type LogPayload = z.output<typeof logPayloadSchema>;

/** The payload as stored, the entry's key first; a field it does not know is kept as written. */
const storedPayloadSchema = z.looseObject({ key: z.string(), ...logPayloadSchema.shape });
const storedPayloadOf = jsonColumn('logs', 'payload', storedPayloadSchema);

export type Log = { id: string; key: string; payload: z.output<typeof storedPayloadSchema>; createdAt: number };

export type LogRow = {
  id: string;
  key: string;
  payload: string;
  user_id: string | null;
  application_id: string | null;
  created_at: number;
};

export type LogTargetRow = { log_id: string; target_id: string };

/** A new entry's row: its actor and application in columns of their own, for the list's filters. */
export const logRowOf = (id: string, key: string, payload: LogPayload, createdAt: number): LogRow => ({
  id,
  key,
  payload: JSON.stringify({ key, ...payload }),
  user_id: payload.userId ?? null,
  application_id: payload.applicationId ?? null,
  created_at: createdAt,
});

const toLog = (row: LogRow): Log => ({
  id: row.id,
  key: row.key,
  payload: storedPayloadOf(row.payload),
  createdAt: row.created_at,
});

export async function insertLogRows(db: Queryable, rows: LogRow[]): Promise<void> {
  await db('logs').insert(rows);
}

export async function insertLogTargetRows(db: Queryable, rows: LogTargetRow[]): Promise<void> {
  await db('log_targets').insert(rows);
}

export type LogFilter = {
  userId?: string;
  applicationId?: string;
  key?: string;
  keyPrefix?: string;
  result?: 'Success' | 'Error';
  /** Entries about this id (`log_targets`). */
  targetId?: string;
  /** Inclusive bounds of `created_at`. */
  from?: number;
  to?: number;
};

/** Entries newest first. */
export async function listLogs(db: Queryable, filter: LogFilter, page: Page): Promise<{ items: Log[]; total: number }> {
  const query = db('logs').select('*');
  const conditions: Array<[string, string, string | number | undefined]> = [
    ['user_id', '=', filter.userId],
    ['application_id', '=', filter.applicationId],
    ['key', '=', filter.key],
    ['created_at', '>=', filter.from],
    ['created_at', '<=', filter.to],
  ];
  for (const [column, operator, value] of conditions) {
    if (value !== undefined) {
      query.where(column, operator, value);
    }
  }
  if (filter.keyPrefix !== undefined) {
    whereStartsWith(query, 'key', filter.keyPrefix);
  }
  if (filter.result !== undefined) {
    // The payload is JSON text with `result` at its top level (as the dashboard counts failures).
    query.where('payload', 'like', `%"result":"${filter.result}"%`);
  }
  if (filter.targetId !== undefined) {
    query.whereIn('id', db('log_targets').select('log_id').where('target_id', filter.targetId));
  }
  const { rows, total } = await listPage<LogRow>(query, page);
  return { items: rows.map(toLog), total };
}

export async function findLog(db: Queryable, id: string): Promise<Log | undefined> {
  const row = await db('logs').where({ id }).first<LogRow | undefined>();
  return row && toLog(row);
}
