import type { Knex } from 'knex';

import { byteForByte } from './collation.ts';

/**
 * Logto's account center: whether the Account API is open to users, and which of their fields it
 * shows and lets them change. One row, `default`, written when an administrator first changes it.
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.createTable('account_center', (table) => {
    byteForByte(db)(table);
    table.string('id', 32).primary();
    table.text('settings').notNullable();
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.dropTable('account_center');
}
