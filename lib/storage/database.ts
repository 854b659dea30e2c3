import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import knex, { type Knex } from 'knex';

import { type Config, ConfigError } from '../config/env.ts';
import { SecretBox, type SecretKeys } from './secret-box.ts';
import { walAutocheckpointPages } from './wal-checkpoints.ts';

/** A connection pool or a transaction: logic takes either, so a change and its side rows commit together. */
export type Queryable = Knex | Knex.Transaction;

/** knex's own type for the client behind a pool or a transaction (its declarations say `any`). */
export const knexClient = (db: Queryable) => db.client as Knex.Client;

/** The three engines (docs/operations.md): SQLite, MySQL/MariaDB, PostgreSQL. */
export type Engine = 'sqlite' | 'mysql' | 'postgres';
const engines: Record<string, Engine> = { 'better-sqlite3': 'sqlite', mysql2: 'mysql', pg: 'postgres' };

export const engineOf = (db: Queryable): Engine => engines[knexClient(db).config.client as string];
export const isSqlite = (db: Queryable) => engineOf(db) === 'sqlite';
export const isMysql = (db: Queryable) => engineOf(db) === 'mysql';
export const isPostgres = (db: Queryable) => engineOf(db) === 'postgres';
/** A server engine: `select … for update` locks rows there (SQLite locks the whole database instead). */
export const locksRows = (db: Queryable) => engineOf(db) !== 'sqlite';

/** `postgres://` and `postgresql://`, as libpq spells its URLs. */
export const isPostgresUrl = (url: string) => /^postgres(ql)?:\/\//.test(url);

type SqliteConnection = {
  prepare: (sql: string) => unknown;
  pragma: (statement: string) => unknown;
  function: (name: string, options: { deterministic: boolean }, fn: (value: unknown) => unknown) => unknown;
};
type MysqlConnection = { query: (sql: string, callback: (error: Error | null) => void) => void };

/**
 * Knex warns on stderr when an instance waits for another's migration lock (that wait is expected),
 * and when a connection cannot be made (the query that needed it fails with that error: its caller
 * reports it, once), or was lost (the next query on it fails, and is reported so).
 */
const log = {
  warn(message: unknown) {
    if (!/already locked|migrate:unlock|^Acquire connection error|^Connection Error/.test(String(message))) {
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

export const secretsOf = (db: Queryable): SecretBox => secretBoxes.get(knexClient(db).config) ?? noKeys;

/** Opens a pool; `keys` seal and open the secrets stored in it (without them, a sealed one cannot be read). */
export function openDatabase(url: string, keys?: SecretKeys): Knex {
  const db = connect(url);
  if (keys) {
    secretBoxes.set(knexClient(db).config, new SecretBox(keys));
  }
  return db;
}

/**
 * A failed query's error names its statement with placeholders, not with its values (knex would
 * write the values into `error.message`): the values may be secrets, and errors get logged.
 */
const compileSqlOnError = false;

/** Statements kept prepared per SQLite connection, the least recently used dropped first. */
const preparedStatementLimit = 200;
/**
 * Longer statements are prepared each time: multi-row inserts (audit batches of 1 to 100 entries)
 * are rarely the same text twice and take about 65 KB each once prepared, against about 10 KB for a
 * one-row statement.
 */
const preparedStatementMaxLength = 1000;

/**
 * knex prepares every statement it runs on SQLite anew (parsing and planning it); the connection
 * keeps them by their text instead. Safe because knex runs each statement to its end before the
 * next (`all`/`run`, never an open iterator), no query sets `safeIntegers` on its statement, and
 * SQLite prepares a statement again by itself when the schema changed.
 */
function keepPreparedStatements(connection: SqliteConnection): void {
  const prepare = connection.prepare.bind(connection);
  const statements = new Map<string, unknown>();
  connection.prepare = (sql) => {
    if (sql.length > preparedStatementMaxLength) {
      return prepare(sql);
    }
    const statement = statements.get(sql) ?? prepare(sql);
    statements.delete(sql);
    if (statements.size >= preparedStatementLimit) {
      statements.delete(statements.keys().next().value as string);
    }
    statements.set(sql, statement);
    return statement;
  };
}

/** The file of a `sqlite:<path>` URL (`:memory:` for an in-memory database); undefined for a server's. */
export const sqliteFile = (url: string): string | undefined =>
  url.startsWith('sqlite:') ? url.slice('sqlite:'.length) : undefined;

const cannotOpenSqlite = (filename: string, code: string) =>
  new ConfigError(
    `cannot open the SQLite database at ${filename} (${code}): correct the path in DB_URL, or let this user create and write it`,
  );

function connect(url: string): Knex {
  const filename = sqliteFile(url);
  if (filename !== undefined) {
    if (filename !== ':memory:') {
      try {
        mkdirSync(dirname(resolve(filename)), { recursive: true });
      } catch (error) {
        throw cannotOpenSqlite(filename, errorCode(error) ?? 'no folder');
      }
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
          connection.pragma(`wal_autocheckpoint = ${walAutocheckpointPages}`);
          keepPreparedStatements(connection);
          // Lower-cases as MySQL's lower() does: SQLite's own folds ASCII only (list searches, storage/search.ts).
          connection.function('fold_case', { deterministic: true }, (value) =>
            typeof value === 'string' ? value.toLowerCase() : value,
          );
          done(null, connection);
        },
      },
    });
  }
  if (isPostgresUrl(url)) {
    return connectPostgres(url);
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

/** PostgreSQL's type ids whose values the service reads as numbers: `bigint` (every time in ms, counts) and `numeric` (sums). */
const numericTypes = new Set([20, 1700]);

/**
 * PostgreSQL through `pg`. Its `bigint` and `numeric` arrive as numbers, as they do from the other
 * drivers: every stored time is a `bigint` of milliseconds, far below 2^53. Read committed is
 * PostgreSQL's default, the level the service is written for.
 */
function connectPostgres(url: string): Knex {
  // Loaded here, as knex loads it: a service on SQLite or MySQL never does.
  const { types } = createRequire(import.meta.url)('pg') as {
    types: { getTypeParser: (oid: number, format?: string) => (value: string) => unknown };
  };
  return knex({
    client: 'pg',
    connection: {
      connectionString: url,
      types: {
        getTypeParser: (oid: number, format?: string) =>
          numericTypes.has(oid) && format !== 'binary' ? Number : types.getTypeParser(oid, format),
      },
    } as Knex.PgConnectionConfig,
    compileSqlOnError,
    log,
    pool: { min: 0, max: 10 },
  });
}

/** PostgreSQL's SQLSTATEs the service tells apart (its errors' `code`). */
export const postgresCodes = {
  uniqueViolation: '23505',
  foreignKeyViolation: '23503',
  characterNotInRepertoire: '22021',
  serializationFailure: '40001',
  deadlockDetected: '40P01',
  invalidPassword: '28P01',
  invalidAuthorization: '28000',
  insufficientPrivilege: '42501',
  invalidCatalogName: '3D000',
  tooManyConnections: '53300',
  adminShutdown: '57P01',
  cannotConnectNow: '57P03',
} as const;

const sqliteUnique = new Set(['SQLITE_CONSTRAINT_UNIQUE', 'SQLITE_CONSTRAINT_PRIMARYKEY']);

export function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: string } | undefined)?.code;
  return (
    code === 'ER_DUP_ENTRY' || code === postgresCodes.uniqueViolation || (code !== undefined && sqliteUnique.has(code))
  );
}

export function isForeignKeyViolation(error: unknown): boolean {
  const code = (error as { code?: string } | undefined)?.code;
  return (
    code === 'SQLITE_CONSTRAINT_FOREIGNKEY' ||
    code === 'ER_NO_REFERENCED_ROW_2' ||
    code === postgresCodes.foreignKeyViolation
  );
}

/** PostgreSQL refused a value's text (U+0000, which its text cannot hold). */
export function isUnstorableText(error: unknown): boolean {
  return (error as { code?: string } | undefined)?.code === postgresCodes.characterNotInRepertoire;
}

const errorCode = (error: unknown): string | undefined => (error as { code?: string } | undefined)?.code;

/** Failures that may pass: the server is starting, its name not yet resolvable, or full. */
const unreachable = new Set([
  'ECONNREFUSED',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ECONNRESET',
  'PROTOCOL_CONNECTION_LOST',
  'ER_CON_COUNT_ERROR',
  'ER_SERVER_SHUTDOWN',
  postgresCodes.tooManyConnections,
  postgresCodes.adminShutdown,
  postgresCodes.cannotConnectNow,
]);

/**
 * Failures that say the database is not there, rather than that a statement failed: unreachable
 * (above), a connection lost, closed or not to be had from the pool, the database dropped, or a Galera node
 * that is not part of the cluster's primary component (it answers every statement with 1047,
 * "WSREP has not yet prepared node for application use", while it joins or has lost its quorum).
 */
const gone = new Set([...unreachable, 'ER_BAD_DB_ERROR', 'ER_UNKNOWN_COM_ERROR', 'PROTOCOL_SEQUENCE_TIMEOUT']);

/**
 * What background work tells of each failure (lib/health/outage.ts): `true` when the failure says the
 * database is gone, which is then reported once for the whole outage, so the caller logs nothing.
 */
export type OutageNotes = { noteFailure(error: unknown): boolean };

/** Failures of a connection the pool held, which the server closed: a fresh one may well work. */
const lost = new Set(['PROTOCOL_CONNECTION_LOST', 'ECONNRESET', 'EPIPE', postgresCodes.adminShutdown]);

export function isConnectionLost(error: unknown): boolean {
  const code = errorCode(error);
  const { message, fatal } = (error ?? {}) as { message?: unknown; fatal?: unknown };
  return (
    (code !== undefined && lost.has(code)) ||
    (code === undefined && fatal === true) ||
    // pg's words for a socket closed under it, without a code.
    (typeof message === 'string' && /Connection terminated unexpectedly/.test(message))
  );
}

export function isDatabaseGone(error: unknown): boolean {
  const code = errorCode(error);
  const { name, fatal } = (error ?? {}) as { name?: unknown; fatal?: unknown };
  // mysql2 marks an error of the connection itself fatal: a ROLLBACK on a connection the server
  // dropped fails so ("Can't add new command when connection is in closed state"), without a code.
  return (
    isConnectionLost(error) || (code !== undefined && gone.has(code)) || name === 'KnexTimeoutError' || fatal === true
  );
}

/** What start-up reports for a failure: one line of what to fix, or (unforeseen) the error itself. */
function startFailure(config: Pick<Config, 'dbUrl' | 'dbConnectTimeout'>, error: unknown): unknown {
  const code = errorCode(error);
  const filename = sqliteFile(config.dbUrl);
  if (filename !== undefined) {
    return cannotOpenSqlite(filename, code ?? 'cannot open');
  }
  const { hostname, port, username, pathname } = new URL(config.dbUrl);
  const host = `${hostname}:${port || (isPostgresUrl(config.dbUrl) ? 5432 : 3306)}`;
  const user = decodeURIComponent(username);
  const database = decodeURIComponent(pathname.slice(1));
  switch (code) {
    case 'ER_ACCESS_DENIED_ERROR':
    case 'ER_ACCESS_DENIED_NO_PASSWORD_ERROR':
    case postgresCodes.invalidPassword:
    case postgresCodes.invalidAuthorization:
      return new ConfigError(
        `the database at ${host} refused user "${user}" (access denied): correct the user and password in DB_URL`,
      );
    case 'ER_DBACCESS_DENIED_ERROR':
    case postgresCodes.insufficientPrivilege:
      return new ConfigError(
        `user "${user}" may not use the database "${database}" at ${host}: grant it access, or correct DB_URL`,
      );
    case 'ER_BAD_DB_ERROR':
    case postgresCodes.invalidCatalogName:
      return new ConfigError(
        `the database "${database}" does not exist at ${host}: create it (${isPostgresUrl(config.dbUrl) ? 'encoding UTF8' : 'character set utf8mb4'}), or correct its name in DB_URL`,
      );
    default:
      return code && unreachable.has(code)
        ? new ConfigError(
            `cannot reach the database at ${host} (${code}) within ${config.dbConnectTimeout} s: start it, or correct the host and port in DB_URL (DB_CONNECT_TIMEOUT sets how long start-up waits)`,
          )
        : error;
  }
}

/**
 * Opens the pool and makes sure the database answers, as start-up and the CLI do. A database that
 * cannot be reached yet (one starting beside the service) is tried again for DB_CONNECT_TIMEOUT
 * seconds; then, or at once for wrong credentials, a missing database or an unusable SQLite path,
 * a ConfigError says in one line what to fix (never the password).
 */
export async function connectDatabase(
  config: Pick<Config, 'dbUrl' | 'secretKeys' | 'dbConnectTimeout'>,
  onRetry: (reason: string) => void,
): Promise<Knex> {
  const db = openDatabase(config.dbUrl, config.secretKeys);
  const deadline = Date.now() + config.dbConnectTimeout * 1000;
  for (let delay = 250; ; delay = Math.min(delay * 2, 2000)) {
    let failure: unknown;
    try {
      await db.raw('select 1');
      return db;
    } catch (error) {
      failure = error;
    }
    const code = errorCode(failure);
    if (code && unreachable.has(code) && Date.now() + delay <= deadline) {
      onRetry(code);
      await sleep(delay);
      continue;
    }
    await db.destroy();
    throw startFailure(config, failure);
  }
}
