import type { Knex } from 'knex';

import { byteForByte } from './collation.ts';

/**
 * Webhook recovery and replay. `hook_events` keeps every event the outbox saw (for
 * HOOKS_EVENT_RETENTION), whoever listened, so a hook can be sent again what it missed.
 * `hook_jobs` holds the background jobs that re-queue failed deliveries (recover) or send logged
 * events again (replay): claimed under a lease, they resume from `cursor_at`/`cursor_id`, which each
 * batch advances in the transaction that does its work. `hook_deliveries.claim_id` is a token fresh
 * at every claim: a settle names it, so a dispatcher whose claim was taken over cannot overwrite the
 * result of a later one (attempts restart at 0 when a delivery is re-queued, so they cannot fence).
 */
export async function up(db: Knex): Promise<void> {
  const binary = byteForByte(db);

  await db.schema.createTable('hook_events', (table) => {
    binary(table);
    table.string('id', 21).primary();
    table.string('event', 64).notNullable();
    // The event's own fields (data, path, ...), JSON; the envelope is each hook's.
    table.text('payload', 'mediumtext').notNullable();
    // The envelope's createdAt, in milliseconds.
    table.bigInteger('created_at').notNullable();
    // Replay reads a window in (created_at, id) order; pruning deletes the oldest.
    table.index(['created_at', 'id']);
  });

  await db.schema.createTable('hook_jobs', (table) => {
    binary(table);
    table.string('id', 21).primary();
    table.string('hook_id', 21).notNullable().references('hooks.id').onDelete('CASCADE').index();
    // recover | replay
    table.string('kind', 16).notNullable();
    // running | done | failed
    table.string('status', 16).notNullable();
    table.bigInteger('since').notNullable();
    table.bigInteger('until').notNullable();
    table.integer('total').notNullable().defaultTo(0);
    table.integer('done').notNullable().defaultTo(0);
    // The last row handled, in the job's (created_at, id) order; null before the first batch.
    table.bigInteger('cursor_at').nullable();
    table.string('cursor_id', 21).nullable();
    table.string('claim_id', 21).nullable();
    table.bigInteger('lease_until').nullable();
    table.bigInteger('created_at').notNullable();
    table.bigInteger('updated_at').notNullable();
    // Claiming: running jobs whose lease is over.
    table.index(['status', 'lease_until']);
  });

  await db.schema.alterTable('hook_deliveries', (table) => {
    table.string('claim_id', 21).nullable();
    // Recover: a hook's failed deliveries in a window of creation times.
    table.index(['hook_id', 'status', 'created_at', 'id'], 'hook_deliveries_recover_index');
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.alterTable('hook_deliveries', (table) => {
    table.dropIndex([], 'hook_deliveries_recover_index');
    table.dropColumn('claim_id');
  });
  await db.schema.dropTableIfExists('hook_jobs');
  await db.schema.dropTableIfExists('hook_events');
}
