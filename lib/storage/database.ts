import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

import knex, { type Knex } from 'knex';

import { SecretBox, type SecretKeys } from './secret-box.ts';

/** A connection pool or a transaction: logic takes either, so a change and its side rows commit together. */
export type Queryable = Knex | Knex.Transaction;

type SqliteConnection = { pragma: (statement: string) => unknown };
type MysqlConnection = { query: (sql: string, callback: (error: Error | null) => void) => void };

/** Knex warns on stderr when an instance waits for another's migration lock; that wait is expected. */
const log = {
  warn(message: string) {
    if (!/already locked|migrate:unlock/.test(String(message))) {
      console.warn(message);
    }
  },
};

/**
 * The secret keys travel with the connection pool: every query that reads or writes a secret holds
 * the pool or one of its transactions, and a transaction's client shares its pool's config object.
 */
const secretBoxes = new WeakMap<object, SecretBox>();
const noKeys = new SecretBox({ old: [] });

export const secretsOf = (db: Queryable): SecretBox => secretBoxes.get(db.client.config as object) ?? noKeys;

/** Opens a pool; `keys` seal and open the secrets stored in it (without them, a sealed one cannot be read). */
export function openDatabase(url: string, keys?: SecretKeys): Knex {
  const db = connect(url);
  if (keys) {
    secretBoxes.set(db.client.config as object, new SecretBox(keys));
  }
  return db;
}

/**
 * A failed query's error names its statement with placeholders, not with its values (knex would
 * write the values into `error.message`): the values may be secrets, and errors get logged.
 */
const compileSqlOnError = false;

/** The file of a `sqlite:<path>` URL (`:memory:` for an in-memory database); undefined for MySQL. */
export const sqliteFile = (url: string): string | undefined => (url.startsWith('sqlite:') ? url.slice('sqlite:'.length) : undefined);

function connect(url: string): Knex {
  const filename = sqliteFile(url);
  if (filename !== undefined) {
    if (filename !== ':memory:') {
      mkdirSync(dirname(resolve(filename)), { recursive: true });
    }
    return knex({
      client: 'better-sqlite3',
      connection: { filename },
      useNullAsDefault: true,
      compileSqlOnError,
      log,
      pool: {
        min: 1,
        max: 1,
        afterCreate(connection: SqliteConnection, done: (error: Error | null, connection: unknown) => void) {
          // WAL lets a second process (npm run migrate, a dispatcher) read while this one writes.
          connection.pragma('journal_mode = WAL');
          connection.pragma('synchronous = NORMAL');
          connection.pragma('foreign_keys = ON');
          connection.pragma('busy_timeout = 5000');
          done(null, connection);
        },
      },
    });
  }
  return knex({
    client: 'mysql2',
    connection: { uri: url, charset: 'utf8mb4', timezone: 'Z' } as Knex.MySql2ConnectionConfig,
    compileSqlOnError,
    log,
    pool: {
      min: 0,
      max: 10,
      // Read committed (PostgreSQL's default): a read after waiting on a row lock sees what the
      // lock holder committed, so check-then-write under a lock is correct.
      afterCreate(connection: MysqlConnection, done: (error: Error | null, connection: unknown) => void) {
        connection.query('set session transaction isolation level read committed', (error) => done(error, connection));
      },
    },
  });
}

const sqliteUnique = new Set(['SQLITE_CONSTRAINT_UNIQUE', 'SQLITE_CONSTRAINT_PRIMARYKEY']);

export function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: string } | undefined)?.code;
  return code === 'ER_DUP_ENTRY' || (code !== undefined && sqliteUnique.has(code));
}

export function isForeignKeyViolation(error: unknown): boolean {
  const code = (error as { code?: string } | undefined)?.code;
  return code === 'SQLITE_CONSTRAINT_FOREIGNKEY' || code === 'ER_NO_REFERENCED_ROW_2';
}
