import type { Knex } from 'knex';

import { enforcesLength } from './collation.ts';

/**
 * Client ids may be https URLs (Client ID Metadata Documents), of up to 255 characters: the columns
 * that record the client a user registered through, an audit entry's application and a revoked
 * token's client grow from 64 to 255. SQLite does not enforce a varchar's length, so only MySQL and
 * PostgreSQL need the change (MySQL's tables keep their byte-for-byte collation: MODIFY takes the table's).
 */
const columns = [
  ['logs', 'application_id'],
  ['users', 'application_id'],
  ['revoked_tokens', 'client_id'],
] as const;

async function resize(db: Knex, length: number, notNullable: (table: string) => boolean): Promise<void> {
  if (!enforcesLength(db)) {
    return;
  }
  for (const [table, column] of columns) {
    await db.schema.alterTable(table, (builder) => {
      const altered = builder.string(column, length);
      (notNullable(table) ? altered.notNullable() : altered.nullable()).alter();
    });
  }
}

export async function up(db: Knex): Promise<void> {
  await resize(db, 255, (table) => table === 'revoked_tokens');
}

export async function down(db: Knex): Promise<void> {
  await resize(db, 64, (table) => table === 'revoked_tokens');
}
