import type { Knex } from 'knex';

import { byteForByte } from './collation.ts';

/** What a signed-in user proved through the Account API (a password, a code), for ten minutes. */
export async function up(db: Knex): Promise<void> {
  await db.schema.createTable('account_verifications', (table) => {
    byteForByte(db)(table);
    table.string('id', 21).primary();
    table.string('user_id', 21).notNullable().references('users.id').onDelete('CASCADE').index();
    table.string('type', 32).notNullable();
    table.string('identifier_type', 16).nullable();
    table.string('identifier_value', 160).nullable();
    table.string('code_id', 21).nullable();
    table.boolean('verified').notNullable().defaultTo(false);
    table.bigInteger('expires_at').notNullable().index();
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.dropTableIfExists('account_verifications');
}
