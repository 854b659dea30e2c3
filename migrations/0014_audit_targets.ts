import type { Knex } from 'knex';

import { byteForByte } from './collation.ts';

/**
 * What each audit entry is about (the ids of a management write: path ids and the created id), so
 * `GET /api/logs?targetId=` answers "who changed this user" from an index.
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.createTable('log_targets', (table) => {
    byteForByte(db)(table);
    table.string('target_id', 128).notNullable();
    table.string('log_id', 21).notNullable();
    table.primary(['target_id', 'log_id']);
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.dropTableIfExists('log_targets');
}
