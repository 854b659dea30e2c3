import type { Knex } from 'knex';

import { deleteEventsBefore } from './event-log-queries.ts';
import { deleteFinishedJobsBefore } from './jobs/job-queries.ts';

/**
 * Drops logged events older than `before`, a batch at a time: each delete is short (no long lock
 * on the table the outbox writes to), and instances pruning together only delete fewer each.
 * Finished recover and replay jobs go after as long.
 */
export async function pruneEventLog(db: Knex, before: number, batch = 1000): Promise<number> {
  let removed = await deleteFinishedJobsBefore(db, before);
  for (;;) {
    const { found, deleted } = await deleteEventsBefore(db, before, batch);
    removed += deleted;
    if (found < batch) {
      return removed;
    }
  }
}
