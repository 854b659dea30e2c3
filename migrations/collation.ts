import type { Knex } from 'knex';

/**
 * On MySQL, tables compare text byte for byte as SQLite and PostgreSQL do: ids, tokens, resource
 * indicators and scope names are case-sensitive. Case-insensitive lookups lower-case explicitly.
 */
export const byteForByte = (db: Knex) => (table: Knex.CreateTableBuilder) => {
  if (db.client.config.client === 'mysql2') {
    table.charset('utf8mb4');
    table.collate('utf8mb4_bin');
  }
};
