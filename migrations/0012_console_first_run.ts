import type { Knex } from 'knex';

import { byteForByte } from './collation.ts';

/**
 * The console's first run: whether an administrator ever existed (in production that closes the
 * first run for good; a database that has one already counts), and the setup tokens printed at
 * start (stored hashed) that let a browser on another machine create the first administrator.
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.createTable('console_first_run', (table) => {
    table.integer('id').primary();
    table.bigInteger('first_administrator_at').nullable();
  });
  const administrator = await db('users_roles')
    .where({ role_id: 'console-admin' })
    .first<Record<string, unknown> | undefined>();
  await db('console_first_run').insert({ id: 1, first_administrator_at: administrator ? Date.now() : null });
  await db.schema.createTable('console_setup_tokens', (table) => {
    byteForByte(db)(table);
    table.string('token_hash', 64).primary();
    table.bigInteger('created_at').notNullable();
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.dropTableIfExists('console_setup_tokens');
  await db.schema.dropTableIfExists('console_first_run');
}
