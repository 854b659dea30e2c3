import type { Queryable } from '../../storage/database.ts';
import { listPage, type Page } from '../../storage/list.ts';
import type { HookLog } from '../schemas.ts';

/** One request sent for a delivery, and its answer. */
export type Attempt = {
  id: string;
  deliveryId: string;
  hookId: string;
  event: string;
  attempt: number;
  result: 'Success' | 'Error';
  statusCode: number | null;
  responseBody: string | null;
  error: string | null;
  durationMs: number;
  createdAt: number;
};

type AttemptRow = {
  id: string;
  delivery_id: string;
  hook_id: string;
  event: string;
  attempt: number;
  result: 'Success' | 'Error';
  status_code: number | null;
  response_body: string | null;
  error: string | null;
  duration_ms: number;
  created_at: number | string;
};

/** A body that is JSON (whole, not cut) is shown as JSON, as Logto shows it; any other as text. */
function shownBody(body: string | null): unknown {
  if (body === null) {
    return null;
  }
  try {
    return JSON.parse(body) as unknown;
  } catch {
    return body;
  }
}

/** An attempt as Logto's recent logs show it. */
const toLog = (row: AttemptRow): HookLog => {
  const key = `TriggerHook.${row.event}`;
  return {
    id: row.id,
    key,
    createdAt: Number(row.created_at),
    payload: {
      key,
      hookId: row.hook_id,
      result: row.result,
      response: { statusCode: row.status_code, body: shownBody(row.response_body) },
      ...(row.error !== null && { error: row.error }),
      attempt: row.attempt,
      webhookId: row.delivery_id,
      durationMs: row.duration_ms,
    },
  };
};

export async function insertAttempts(db: Queryable, attempts: Attempt[]): Promise<void> {
  await db('hook_attempts').insert(
    attempts.map((attempt): AttemptRow => ({
      id: attempt.id,
      delivery_id: attempt.deliveryId,
      hook_id: attempt.hookId,
      event: attempt.event,
      attempt: attempt.attempt,
      result: attempt.result,
      status_code: attempt.statusCode,
      response_body: attempt.responseBody,
      error: attempt.error,
      duration_ms: attempt.durationMs,
      created_at: attempt.createdAt,
    })),
  );
}

export type AttemptFilter = { from?: number; to?: number; event?: string };

/** A hook's attempts logged between `from` and `to` (inclusive, either open), newest first. */
export async function listAttempts(
  db: Queryable,
  hookId: string,
  { from, to, event }: AttemptFilter,
  page: Page,
): Promise<{ items: HookLog[]; total: number }> {
  const rows = db('hook_attempts').where({ hook_id: hookId }).select('*');
  if (from !== undefined) {
    rows.where('created_at', '>=', from);
  }
  if (to !== undefined) {
    rows.where('created_at', '<=', to);
  }
  if (event !== undefined) {
    rows.where('event', event);
  }
  const { rows: found, total } = await listPage<AttemptRow>(rows, page);
  return { items: found.map(toLog), total };
}

export type ExecutionStats = { requestCount: number; successCount: number };

/** Requests (attempts) sent to each hook since `since`, and how many were answered 2xx. */
export async function executionStats(
  db: Queryable,
  hookIds: string[],
  since: number,
): Promise<Map<string, ExecutionStats>> {
  const stats = new Map<string, ExecutionStats>(hookIds.map((id) => [id, { requestCount: 0, successCount: 0 }]));
  if (hookIds.length === 0) {
    return stats;
  }
  const rows = (await db('hook_attempts')
    .whereIn('hook_id', hookIds)
    .where('created_at', '>=', since)
    .groupBy('hook_id', 'result')
    .select('hook_id', 'result')
    .count({ count: '*' })) as unknown as Array<{ hook_id: string; result: string; count: number | string }>;
  for (const row of rows) {
    const entry = stats.get(row.hook_id);
    if (!entry) {
      throw new Error(`execution stats: hook ${row.hook_id} was not asked for`);
    }
    entry.requestCount += Number(row.count);
    if (row.result === 'Success') {
      entry.successCount += Number(row.count);
    }
  }
  return stats;
}

/**
 * Deletes up to `limit` of the hook's attempts logged before `before` (through its (hook_id,
 * created_at) index: there is none on created_at alone): how many it found, and how many of those
 * were still there to delete.
 */
export async function deleteAttemptsBefore(
  db: Queryable,
  hookId: string,
  before: number,
  limit: number,
): Promise<{ found: number; deleted: number }> {
  const ids = await db('hook_attempts')
    .where({ hook_id: hookId })
    .where('created_at', '<', before)
    .limit(limit)
    .pluck('id');
  return { found: ids.length, deleted: ids.length > 0 ? await db('hook_attempts').whereIn('id', ids).delete() : 0 };
}
