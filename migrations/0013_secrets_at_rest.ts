import type { Knex } from 'knex';

import { byteForByte, enforcesLength } from './collation.ts';

/**
 * Secrets at rest (lib/storage/sealed-columns.ts): the keys that may have sealed a value here, and
 * columns wide enough for a sealed value (`enc:v1:<key id>:<nonce>:<ciphertext>`, about 4/3 of the
 * secret plus 60 characters). SQLite does not enforce a varchar's length, so only MySQL and PostgreSQL change.
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.createTable('secret_keys', (table) => {
    byteForByte(db)(table);
    // keyIdOf(key): a digest's first bytes, never the key.
    table.string('id', 32).primary();
    table.bigInteger('created_at').notNullable();
  });
  if (enforcesLength(db)) {
    await db.schema.alterTable('applications', (table) => table.string('secret', 512).notNullable().alter());
    await db.schema.alterTable('hooks', (table) => table.string('signing_key', 256).notNullable().alter());
    await db.schema.alterTable('user_mfa_verifications', (table) => table.string('secret', 256).nullable().alter());
  }
}

export async function down(db: Knex): Promise<void> {
  await db.schema.dropTable('secret_keys');
}
