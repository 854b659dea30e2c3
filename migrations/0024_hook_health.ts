import type { Knex } from 'knex';

import { byteForByte } from './collation.ts';

/**
 * Endpoint health, per-hook throttling and ordered delivery (docs/webhooks.md, "Endpoint health",
 * "Throttling", "Ordering"). On `hooks`, the settings and why a hook was disabled. `hook_dispatch`
 * holds the dispatchers' shared state of each hook (the rate limiter's next free time, when its
 * run of failed attempts began): its row is what every dispatcher locks to claim for that hook, a
 * table of its own so that no mutation writing the outbox (whose rows reference `hooks`) waits on it.
 * On `hook_deliveries`, the entity an event is about and its place in commit order.
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.alterTable('hooks', (table) => {
    // none | per-entity
    table.string('ordering', 16).notNullable().defaultTo('none');
    table.integer('rate_limit_per_second').nullable();
    table.string('notify_email', 254).nullable();
    table.string('disabled_reason', 512).nullable();
  });

  await db.schema.createTable('hook_dispatch', (table) => {
    byteForByte(db)(table);
    table.string('hook_id', 21).primary().references('hooks.id').onDelete('CASCADE');
    // Generic cell rate algorithm: the theoretical arrival time of the next delivery (ms).
    table.bigInteger('rate_next_at').nullable();
    // The first failed attempt since the last successful one; null while healthy.
    table.bigInteger('failing_since').nullable();
  });

  await db.schema.alterTable('hook_deliveries', (table) => {
    // `User:<id>`, `Role:<id>`...; null for events about no one entity (never held back).
    table.string('entity_id', 128).nullable();
    // Microseconds, strictly increasing per process: the order events of one entity committed in.
    table.bigInteger('sequence').nullable();
    table.index(['hook_id', 'entity_id', 'sequence']);
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.alterTable('hook_deliveries', (table) => {
    table.dropIndex(['hook_id', 'entity_id', 'sequence']);
  });
  await db.schema.alterTable('hook_deliveries', (table) => {
    table.dropColumn('entity_id');
    table.dropColumn('sequence');
  });
  await db.schema.dropTableIfExists('hook_dispatch');
  await db.schema.alterTable('hooks', (table) => {
    table.dropColumn('ordering');
    table.dropColumn('rate_limit_per_second');
    table.dropColumn('notify_email');
    table.dropColumn('disabled_reason');
  });
}
