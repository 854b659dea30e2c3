import type { Knex } from 'knex';

import { byteForByte } from './collation.ts';

/**
 * Logto's personal access tokens (`/api/users/:userId/personal-access-tokens`), exchanged at the
 * token endpoint for a user's access token, any number of times until `expires_at` (null: never).
 *
 * As one-time tokens are, a token is found by its SHA-256 digest (unique) and kept sealed for the API
 * to show it again, as Logto shows it; a copy of the database alone then signs no one in. Logto keys
 * a token by `(user_id, name)`; the row has an `id` of its own as well, since a sealed value is bound
 * to its row's id (a rename keeps it). The user's tokens go with the user.
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.createTable('personal_access_tokens', (table) => {
    byteForByte(db)(table);
    table.string('id', 21).primary();
    table.string('user_id', 21).notNullable().references('users.id').onDelete('CASCADE');
    table.string('name', 256).notNullable();
    table.string('value_digest', 64).notNullable().unique();
    table.string('value', 512).notNullable();
    table.bigInteger('created_at').notNullable();
    table.bigInteger('expires_at').nullable();
    table.unique(['user_id', 'name']);
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.dropTable('personal_access_tokens');
}
