import type { Knex } from 'knex';

import { byteForByte } from './collation.ts';

/**
 * Webhooks: the hooks, their outbox (one delivery per hook and event, written in the transaction of
 * the change that causes it) and the log of every attempt to deliver.
 */
export async function up(db: Knex): Promise<void> {
  const binary = byteForByte(db);

  await db.schema.createTable('hooks', (table) => {
    binary(table);
    table.string('id', 21).primary();
    table.string('name', 256).notNullable().defaultTo('');
    // JSON array of event names.
    table.text('events').notNullable();
    // JSON {url, headers?, retries?}.
    table.text('config').notNullable();
    table.string('signing_key', 64).notNullable();
    table.boolean('enabled').notNullable().defaultTo(true);
    table.bigInteger('created_at').notNullable().index();
  });

  await db.schema.createTable('hook_deliveries', (table) => {
    binary(table);
    // The `webhook-id` header: the same on every attempt, receivers deduplicate by it.
    table.string('id', 21).primary();
    table.string('hook_id', 21).notNullable().references('hooks.id').onDelete('CASCADE');
    table.string('event', 64).notNullable();
    // The JSON envelope exactly as sent (and signed).
    table.text('payload', 'mediumtext').notNullable();
    // pending | delivering | succeeded | failed
    table.string('status', 16).notNullable();
    // Attempts made, counting the one in progress: also the fencing token of a claim.
    table.integer('attempts').notNullable().defaultTo(0);
    // When the row may next be claimed: a pending row's next attempt, a delivering row's lease end
    // (a dispatcher that died leaves it claimable again); null once final.
    table.bigInteger('next_attempt_at').nullable();
    table.bigInteger('lease_until').nullable();
    table.text('last_error').nullable();
    table.bigInteger('created_at').notNullable();
    table.bigInteger('updated_at').notNullable();
    // Claiming, hook by hook: a range scan of one hook's due rows, however long another hook's backlog.
    table.index(['hook_id', 'next_attempt_at']);
    // Pruning finished deliveries.
    table.index(['status', 'updated_at']);
  });

  await db.schema.createTable('hook_attempts', (table) => {
    binary(table);
    table.string('id', 21).primary();
    table.string('delivery_id', 21).notNullable().references('hook_deliveries.id').onDelete('CASCADE').index();
    table.string('hook_id', 21).notNullable().references('hooks.id').onDelete('CASCADE');
    table.string('event', 64).notNullable();
    table.integer('attempt').notNullable();
    // Success | Error
    table.string('result', 16).notNullable();
    table.integer('status_code').nullable();
    // At most 2 KB of the response body.
    table.text('response_body').nullable();
    table.text('error').nullable();
    table.integer('duration_ms').notNullable();
    table.bigInteger('created_at').notNullable().index();
    // recent-logs and execution stats.
    table.index(['hook_id', 'created_at']);
  });

  // Enabled hooks and their events, cached for the outbox; every hook write bumps it.
  await db('cache_versions').insert({ name: 'hooks', version: 0 });
}

export async function down(db: Knex): Promise<void> {
  await db('cache_versions').where({ name: 'hooks' }).delete();
  await db.schema.dropTableIfExists('hook_attempts');
  await db.schema.dropTableIfExists('hook_deliveries');
  await db.schema.dropTableIfExists('hooks');
}
