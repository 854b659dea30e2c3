import type { Knex } from 'knex';

import { byteForByte } from './collation.ts';

/** Impersonation subject tokens (stored hashed, single use) and the audit log. */
export async function up(db: Knex): Promise<void> {
  const binary = byteForByte(db);

  await db.schema.createTable('subject_tokens', (table) => {
    binary(table);
    table.string('id', 21).primary();
    table.string('token_hash', 64).notNullable().unique();
    table.string('user_id', 21).notNullable().references('users.id').onDelete('CASCADE');
    // The application that asked for it: it becomes the `act` of the exchanged token.
    table.string('application_id', 64).nullable();
    table.text('context').notNullable();
    table.bigInteger('created_at').notNullable();
    table.bigInteger('expires_at').notNullable().index();
    table.bigInteger('consumed_at').nullable();
  });

  // Whether a user exists and is active, cached for the token endpoint; creation, deletion and
  // suspension bump it.
  await db('cache_versions').insert({ name: 'users', version: 0 });

  await db.schema.createTable('logs', (table) => {
    binary(table);
    table.string('id', 21).primary();
    table.string('key', 128).notNullable();
    table.text('payload', 'mediumtext').notNullable();
    table.string('user_id', 64).nullable();
    table.string('application_id', 64).nullable();
    table.bigInteger('created_at').notNullable().index();
    table.index(['key', 'created_at']);
    table.index(['user_id', 'created_at']);
    table.index(['application_id', 'created_at']);
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.dropTableIfExists('logs');
  await db('cache_versions').where({ name: 'users' }).delete();
  await db.schema.dropTableIfExists('subject_tokens');
}
