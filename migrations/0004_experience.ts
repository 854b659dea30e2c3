import type { Knex } from 'knex';

import { byteForByte } from './collation.ts';

/** The sign-in experience: its settings, per-interaction state, codes, lockout counters and send log. */
export async function up(db: Knex): Promise<void> {
  const binary = byteForByte(db);

  await db.schema.createTable('sign_in_experience', (table) => {
    binary(table);
    table.string('id', 21).primary();
    table.text('settings').notNullable();
  });
  await db('cache_versions').insert({ name: 'settings', version: 0 });

  // What a sign-in, registration or reset has proven so far, keyed by the provider's interaction.
  await db.schema.createTable('experience_states', (table) => {
    binary(table);
    table.string('interaction_uid', 64).primary();
    table.text('state', 'mediumtext').notNullable();
    table.bigInteger('expires_at').notNullable().index();
  });

  await db.schema.createTable('verification_codes', (table) => {
    binary(table);
    table.string('id', 21).primary();
    table.string('recipient', 160).notNullable().index();
    table.string('purpose', 32).notNullable();
    table.string('code_hash', 128).notNullable();
    table.integer('attempts').notNullable().defaultTo(0);
    table.bigInteger('created_at').notNullable();
    table.bigInteger('expires_at').notNullable().index();
    table.bigInteger('verified_at').nullable();
  });

  // Every verification message sent, per normalised recipient: the send rate limit counts these.
  await db.schema.createTable('message_sends', (table) => {
    binary(table);
    table.increments('id').primary();
    table.string('recipient', 160).notNullable();
    table.bigInteger('created_at').notNullable();
    table.index(['recipient', 'created_at']);
  });

  // One row per recipient ever sent to: the lock that serialises concurrent sends to them.
  await db.schema.createTable('message_recipients', (table) => {
    binary(table);
    table.string('recipient', 160).primary();
    table.bigInteger('last_sent_at').notNullable();
  });

  // Consecutive failed verifications per identifier, and the lock they caused.
  await db.schema.createTable('sentinel_activities', (table) => {
    binary(table);
    table.string('target', 200).primary();
    table.integer('failures').notNullable().defaultTo(0);
    table.bigInteger('locked_until').nullable();
    table.bigInteger('updated_at').notNullable();
  });

  // The development connector's outbox, readable by admins outside production.
  await db.schema.createTable('development_messages', (table) => {
    binary(table);
    table.string('id', 21).primary();
    table.string('recipient', 160).notNullable().index();
    table.string('type', 8).notNullable();
    table.string('purpose', 32).notNullable();
    table.string('code', 16).notNullable();
    table.bigInteger('created_at').notNullable().index();
  });
}

export async function down(db: Knex): Promise<void> {
  for (const table of [
    'development_messages',
    'sentinel_activities',
    'message_recipients',
    'message_sends',
    'verification_codes',
    'experience_states',
    'sign_in_experience',
  ]) {
    await db.schema.dropTableIfExists(table);
  }
  await db('cache_versions').where({ name: 'settings' }).delete();
}
