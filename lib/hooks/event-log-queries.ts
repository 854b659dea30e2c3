import type { Knex } from 'knex';

import type { Queryable } from '../storage/database.ts';

/**
 * The event log, `hook_events`: every event the outbox saw, as it saw it, whoever listened. Replay
 * reads it in (created_at, id) order, its primary key; it is pruned by age, oldest first.
 */

/** An event as logged: `payload` is the JSON of its own fields (the envelope is each hook's). */
export type LoggedEvent = { id: string; event: string; payload: string; createdAt: number };

type EventRow = { id: string; event: string; payload: string; created_at: number | string };

/** A position in (created_at, id) order: rows after it come next. */
export type Cursor = { at: number; id: string };

/** Keeps the rows after `cursor` in (created_at, id) order (all of them without one). */
export function whereAfter(query: Knex.QueryBuilder, cursor: Cursor | undefined): void {
  if (cursor) {
    void query.where((after) => {
      void after.where('created_at', '>', cursor.at).orWhere((same) => {
        void same.where('created_at', '=', cursor.at).where('id', '>', cursor.id);
      });
    });
  }
}

export async function insertEvent(db: Queryable, logged: LoggedEvent): Promise<void> {
  await db('hook_events').insert({
    id: logged.id,
    event: logged.event,
    payload: logged.payload,
    created_at: logged.createdAt,
  });
}

/** The logged events of `events` created in [since, until], after `cursor` if given, up to `limit`, in order. */
export async function listEventsIn(
  db: Queryable,
  window: { since: number; until: number; events: string[] },
  cursor: Cursor | undefined,
  limit: number,
): Promise<LoggedEvent[]> {
  const query = db('hook_events')
    .whereIn('event', window.events)
    .where('created_at', '>=', window.since)
    .where('created_at', '<=', window.until)
    .orderBy([
      { column: 'created_at', order: 'asc' },
      { column: 'id', order: 'asc' },
    ])
    .limit(limit)
    .select<EventRow[]>('id', 'event', 'payload', 'created_at');
  whereAfter(query, cursor);
  return (await query).map((row) => ({
    id: row.id,
    event: row.event,
    payload: row.payload,
    createdAt: Number(row.created_at),
  }));
}

export async function countEventsIn(
  db: Queryable,
  window: { since: number; until: number; events: string[] },
): Promise<number> {
  const row = await db('hook_events')
    .whereIn('event', window.events)
    .where('created_at', '>=', window.since)
    .where('created_at', '<=', window.until)
    .first<{ count: number | string }>(db.raw('count(*) as count'));
  return Number(row.count);
}

/**
 * Deletes up to `limit` events logged before `before`, oldest first: how many it found, and how
 * many of those were still there to delete (another instance may prune at the same time). Both
 * statements go by the key, (created_at, id): the batch is every row up to its last one.
 */
export async function deleteEventsBefore(
  db: Queryable,
  before: number,
  limit: number,
): Promise<{ found: number; deleted: number }> {
  const found = await db('hook_events')
    .where('created_at', '<', before)
    .orderBy([
      { column: 'created_at', order: 'asc' },
      { column: 'id', order: 'asc' },
    ])
    .limit(limit)
    .select<Array<Pick<EventRow, 'id' | 'created_at'>>>('id', 'created_at');
  const last = found.at(-1);
  if (!last) {
    return { found: 0, deleted: 0 };
  }
  // A range of the key's first column, then the last one's ties.
  const deleted = await db('hook_events')
    .where('created_at', '<=', last.created_at)
    .where((upTo) => {
      void upTo.where('created_at', '<', last.created_at).orWhere('id', '<=', last.id);
    })
    .delete();
  return { found: found.length, deleted };
}
