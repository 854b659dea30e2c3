import type { Queryable } from '../../storage/database.ts';
import { type Cursor, whereAfter } from '../event-log-queries.ts';

/** A hook's failed deliveries created in [since, until], read by recover in (created_at, id) order. */
export type FailedWindow = { hookId: string; since: number; until: number };

const failedIn = (db: Queryable, { hookId, since, until }: FailedWindow) =>
  db('hook_deliveries')
    .where({ hook_id: hookId, status: 'failed' })
    .where('created_at', '>=', since)
    .where('created_at', '<=', until);

/** Up to `limit` of them after `cursor`: their ids and creation times. */
export async function listFailedIn(
  db: Queryable,
  window: FailedWindow,
  cursor: Cursor | undefined,
  limit: number,
): Promise<Cursor[]> {
  const query = failedIn(db, window)
    .orderBy([
      { column: 'created_at', order: 'asc' },
      { column: 'id', order: 'asc' },
    ])
    .limit(limit)
    .select<Array<{ id: string; created_at: number | string }>>('id', 'created_at');
  whereAfter(query, cursor);
  return (await query).map((row) => ({ id: row.id, at: Number(row.created_at) }));
}

export async function countFailedIn(db: Queryable, window: FailedWindow): Promise<number> {
  const row = await failedIn(db, window).first<{ count: number | string }>(db.raw('count(*) as count'));
  return Number(row.count);
}
