import type { Knex } from 'knex';

import { byteForByte } from './collation.ts';

/**
 * Logto's one-time tokens (magic links, invitations: `POST /api/one-time-tokens`), and two settings
 * of a user's `logto-configs`: MFA skipped at each sign-in (set by an administrator) and the passkey
 * sign-in prompt declined.
 *
 * A token is found by its SHA-256 digest (unique) and kept sealed for the API to show it again, as
 * Logto shows it; a copy of the database alone then signs no one in. `status` is what was set
 * (`active`, `consumed`, `revoked`, `expired`: Logto's values); an active token past `expires_at`
 * is expired whatever the row still says. `(email_key, created_at)` lists one address's tokens.
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.createTable('one_time_tokens', (table) => {
    byteForByte(db)(table);
    table.string('id', 21).primary();
    table.string('email', 128).notNullable();
    table.string('email_key', 128).notNullable();
    table.string('token_digest', 64).notNullable().unique();
    table.string('token', 512).notNullable();
    table.text('context').notNullable();
    table.string('status', 16).notNullable();
    table.bigInteger('expires_at').notNullable();
    table.bigInteger('created_at').notNullable();
    table.index(['email_key', 'created_at']);
  });
  await db.schema.alterTable('users', (table) => {
    table.boolean('mfa_skipped_on_sign_in').notNullable().defaultTo(false);
    table.boolean('passkey_sign_in_skipped').notNullable().defaultTo(false);
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.alterTable('users', (table) => {
    table.dropColumn('mfa_skipped_on_sign_in');
    table.dropColumn('passkey_sign_in_skipped');
  });
  await db.schema.dropTable('one_time_tokens');
}
