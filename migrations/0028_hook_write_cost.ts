import type { Knex } from 'knex';

import { byteForByte } from './collation.ts';

/**
 * Fewer index trees written per webhook (issue #16, docs/decisions.md "What a webhook writes"). On
 * SQLite every tree a commit touches is at least one 4 KiB page appended to the WAL, on MySQL one
 * more index to maintain; each of these was written for every event or attempt and read by nothing
 * the write path or a frequent read needs:
 * - `hook_events` is keyed by (created_at, id), the order replay reads and pruning deletes in,
 *   instead of `id` plus an index on (created_at, id): one tree instead of two (three on SQLite).
 * - `hook_deliveries (status, updated_at)` served pruning only: pruning goes hook by hook through
 *   (hook_id, status, created_at, id) now (a finished delivery was created before it was updated).
 * - `hook_attempts (created_at)` likewise: pruning goes through (hook_id, created_at). Its
 *   `delivery_id` foreign key and index: no query reads attempts by delivery; attempts go with
 *   their hook (its foreign key) or are pruned before their deliveries.
 */
const eventColumns = (db: Knex) => (table: Knex.CreateTableBuilder) => {
  byteForByte(db)(table);
  table.string('id', 21).notNullable();
  table.string('event', 64).notNullable();
  table.text('payload', 'mediumtext').notNullable();
  table.bigInteger('created_at').notNullable();
};

/** Rebuilds `hook_events` with its rows, keyed as `key` says. */
async function rebuildEvents(db: Knex, key: (table: Knex.CreateTableBuilder) => void): Promise<void> {
  await db.schema.createTable('hook_events_next', (table) => {
    eventColumns(db)(table);
    key(table);
  });
  await db.raw(
    'insert into hook_events_next (id, event, payload, created_at) select id, event, payload, created_at from hook_events',
  );
  await db.schema.dropTable('hook_events');
  await db.schema.renameTable('hook_events_next', 'hook_events');
}

export async function up(db: Knex): Promise<void> {
  await rebuildEvents(db, (table) => table.primary(['created_at', 'id']));
  await db.schema.alterTable('hook_deliveries', (table) => {
    table.dropIndex(['status', 'updated_at']);
  });
  await db.schema.alterTable('hook_attempts', (table) => {
    table.dropForeign(['delivery_id']);
  });
  await db.schema.alterTable('hook_attempts', (table) => {
    table.dropIndex(['delivery_id']);
    table.dropIndex(['created_at']);
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.alterTable('hook_attempts', (table) => {
    table.index(['created_at']);
    table.index(['delivery_id']);
  });
  // Attempts whose delivery was pruned before them would fail the foreign key.
  await db('hook_attempts')
    .whereNotExists(
      db('hook_deliveries').select(db.raw('1')).whereRaw('hook_deliveries.id = hook_attempts.delivery_id'),
    )
    .delete();
  await db.schema.alterTable('hook_attempts', (table) => {
    table.foreign('delivery_id').references('hook_deliveries.id').onDelete('CASCADE');
  });
  await db.schema.alterTable('hook_deliveries', (table) => {
    table.index(['status', 'updated_at']);
  });
  await rebuildEvents(db, (table) => {
    table.primary(['id']);
    // Named apart from the old table's index while both exist (SQLite's index names are global).
    table.index(['created_at', 'id'], 'hook_events_replay_index');
  });
}
