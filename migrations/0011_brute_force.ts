import type { Knex } from 'knex';

import { byteForByte } from './collation.ts';

/** Failed client authentications, counted per client id and per source address. */
export async function up(db: Knex): Promise<void> {
  const binary = byteForByte(db);

  // One row per key (`client:<id>`, `address:<ip or /64>`): the failures in the window that began at
  // window_started_at, and until when the key is refused once it reached its limit.
  await db.schema.createTable('client_auth_failures', (table) => {
    binary(table);
    table.string('target', 200).primary();
    table.integer('failures').notNullable();
    table.bigInteger('window_started_at').notNullable().index();
    table.bigInteger('blocked_until').nullable().index();
  });
  await db('cache_versions').insert({ name: 'throttles', version: 0 });
}

export async function down(db: Knex): Promise<void> {
  await db('cache_versions').where({ name: 'throttles' }).delete();
  await db.schema.dropTableIfExists('client_auth_failures');
}
