import type { Knex } from 'knex';

/** knex declares its client as `any`; its own type for it says what the config holds. */
export const isMysql = (db: Knex) => (db.client as Knex.Client).config.client === 'mysql2';

/** MySQL and PostgreSQL refuse a value longer than its varchar; SQLite stores it whole. */
export const enforcesLength = (db: Knex) => (db.client as Knex.Client).config.client !== 'better-sqlite3';

/**
 * On MySQL, tables compare text byte for byte as SQLite and PostgreSQL do: ids, tokens, resource
 * indicators and scope names are case-sensitive. Case-insensitive lookups lower-case explicitly.
 */
export const byteForByte = (db: Knex) => (table: Knex.CreateTableBuilder) => {
  if (isMysql(db)) {
    table.charset('utf8mb4');
    table.collate('utf8mb4_bin');
  }
};
