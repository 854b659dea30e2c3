import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import knex, { type Knex } from 'knex';

import { migrateToLatest } from '../../lib/storage/migrate.ts';

/**
 * `TEST_DATABASE=mysql` runs the suite on the MySQL/MariaDB server at TEST_MYSQL_URL,
 * `TEST_DATABASE=postgres` on the PostgreSQL server at TEST_POSTGRES_URL; otherwise SQLite.
 */
export type TestDatabase = 'sqlite' | 'mysql' | 'postgres';
export const testDatabase: TestDatabase =
  process.env.TEST_DATABASE === 'mysql' || process.env.TEST_DATABASE === 'postgres'
    ? process.env.TEST_DATABASE
    : 'sqlite';
export const mysqlServerUrl = process.env.TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';
export const postgresServerUrl = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
/** The server the run's databases are made on (undefined on SQLite). */
export const serverUrl = { sqlite: undefined, mysql: mysqlServerUrl, postgres: postgresServerUrl }[testDatabase];

/**
 * Every database a run makes is named after the run, so that its end drops what all its processes
 * made. Set by test/run.ts for each database's run (they go side by side: one's end must not take the
 * other's files), else by mocha's main process when it loads this file; its workers inherit it.
 */
const runId = (process.env.TEST_RUN_ID ??= `${Date.now().toString(36)}${process.pid.toString(36)}`);
const sqliteFolder = join(tmpdir(), `identity-test-${runId}`);
const unique = () => `${process.pid.toString(36)}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;

const created: string[] = [];

/** A connection to the server's own database, which makes and drops the run's. */
export const serverAdmin = (): Knex =>
  testDatabase === 'postgres'
    ? knex({ client: 'pg', connection: postgresServerUrl, pool: { min: 0, max: 1 } })
    : knex({ client: 'mysql2', connection: mysqlServerUrl, pool: { min: 0, max: 1 } });
const serverUrlOf = (name: string) => Object.assign(new URL(serverUrl ?? ''), { pathname: `/${name}` }).toString();
export const databaseNameOf = (url: string) => decodeURIComponent(new URL(url).pathname.slice(1));

/** Drops a database on the run's server, sessions still open on it included (a service's pool). */
export async function dropServerDatabase(admin: Knex, name: string): Promise<void> {
  await admin.raw(
    testDatabase === 'postgres' ? 'drop database if exists ?? with (force)' : 'drop database if exists ??',
    [name],
  );
}

/** What the server creates a database with: the character set MySQL needs; PostgreSQL's UTF8 from its template. */
const createDatabaseSql = (template?: string) =>
  testDatabase === 'postgres'
    ? `create database ??${template ? ' template ??' : ''}`
    : 'create database ?? character set utf8mb4 collate utf8mb4_unicode_ci';

/** A new database with nothing in it, kept until the run's end. */
async function createDatabase(): Promise<string> {
  if (testDatabase === 'sqlite') {
    const folder = join(sqliteFolder, unique());
    mkdirSync(folder, { recursive: true });
    return `sqlite:${join(folder, 'identity.sqlite3')}`;
  }
  const name = `t_${runId}_${unique()}`;
  const admin = serverAdmin();
  try {
    await admin.raw(createDatabaseSql(), [name]);
  } finally {
    await admin.destroy();
  }
  return serverUrlOf(name);
}

/** A new, empty database: for the tests of migrations and of a first start on nothing. */
export async function emptyDatabaseUrl(): Promise<string> {
  const url = await createDatabase();
  if (testDatabase !== 'sqlite') {
    // Dropped at the end of the test file that made it: a run makes hundreds.
    created.push(databaseNameOf(url));
  }
  return url;
}

/**
 * A database migrated once per process, which fresh databases copy: MySQL runs 28 migrations' DDL in
 * about a second, while creating the same tables from their definitions takes a fifth of that.
 * PostgreSQL copies a whole database itself (`create database … template`).
 */
type Template = { url: string; statements: string[] };
let template: Promise<Template> | undefined;

async function makeTemplate(): Promise<Template> {
  const url = await createDatabase();
  const db = openDatabase(url);
  try {
    await migrateToLatest(db);
    if (testDatabase !== 'mysql') {
      return { url, statements: [] };
    }
    const schema = new URL(url).pathname.slice(1);
    const tables: string[] = (
      await db.raw('select table_name as name from information_schema.tables where table_schema = ?', [schema])
    )[0].map((row: { name: string }) => row.name);
    const statements = ['set foreign_key_checks = 0'];
    for (const table of tables) {
      const [[definition]] = await db.raw('show create table ??', [table]);
      statements.push(definition['Create Table']);
      const [[{ n }]] = await db.raw('select count(*) as n from ??', [table]);
      if (Number(n) > 0) {
        statements.push(db.raw('insert into ?? select * from ??.??', [table, schema, table]).toQuery());
      }
    }
    return { url, statements };
  } finally {
    await db.destroy();
  }
}

/** A new database for one service (or several instances sharing it), migrated to this code's latest. */
export async function freshDatabaseUrl(): Promise<string> {
  const { url: source, statements } = await (template ??= makeTemplate());
  if (testDatabase === 'postgres') {
    const name = `t_${runId}_${unique()}`;
    const admin = serverAdmin();
    try {
      await admin.raw(createDatabaseSql(source), [name, databaseNameOf(source)]);
    } finally {
      await admin.destroy();
    }
    created.push(name);
    return serverUrlOf(name);
  }
  const url = await emptyDatabaseUrl();
  if (testDatabase === 'sqlite') {
    copyFileSync(source.slice('sqlite:'.length), url.slice('sqlite:'.length));
    return url;
  }
  const db = knex({
    client: 'mysql2',
    connection: { uri: url, multipleStatements: true } as never,
    pool: { min: 0, max: 1 },
  });
  try {
    await db.raw(statements.join(';\n'));
  } finally {
    await db.destroy();
  }
  return url;
}

/** Drops the server's databases this process created since the last call (each test file's, at its end). */
export async function dropCreatedDatabases(): Promise<void> {
  if (created.length === 0) {
    return;
  }
  const admin = serverAdmin();
  try {
    for (const name of created.splice(0)) {
      await dropServerDatabase(admin, name);
    }
  } finally {
    await admin.destroy();
  }
}

/** At the run's end, in mocha's main process: whatever any of its processes made, templates included. */
export async function dropRunDatabases(): Promise<void> {
  rmSync(sqliteFolder, { recursive: true, force: true });
  if (testDatabase === 'sqlite') {
    return;
  }
  const admin = serverAdmin();
  try {
    const pattern = `t\\_${runId}\\_%`;
    const names: string[] =
      testDatabase === 'postgres'
        ? await admin('pg_database').where('datname', 'like', pattern).pluck('datname')
        : (await admin.raw('show databases like ?', [pattern]))[0].map(
            (row: Record<string, string>) => Object.values(row)[0],
          );
    for (const name of names) {
      await dropServerDatabase(admin, name);
    }
  } finally {
    await admin.destroy();
  }
}

/** A table's name as the statements knex writes quote it (in error messages and spans): `x` or, on PostgreSQL, "x". */
export const quotedName = (name: string) => (testDatabase === 'postgres' ? `"${name}"` : `\`${name}\``);
/** A statement's placeholder as knex writes it: `?`, or PostgreSQL's numbered `$1`, `$2`, …. */
export const placeholder = testDatabase === 'postgres' ? '$' : '?';

/** Takes a service's database away under it: dropped on a server (its sessions ended), its files removed on SQLite. */
export async function removeDatabase(url: string): Promise<void> {
  if (testDatabase === 'sqlite') {
    for (const suffix of ['', '-wal', '-shm']) {
      rmSync(`${url.slice('sqlite:'.length)}${suffix}`, { force: true });
    }
    return;
  }
  const admin = serverAdmin();
  try {
    await dropServerDatabase(admin, databaseNameOf(url));
  } finally {
    await admin.destroy();
  }
}

/** A service's database (its `config.dbUrl`), opened beside it as an operator would: to make some statements fail. */
export function openDatabase(url: string): Knex {
  if (testDatabase === 'postgres') {
    return knex({ client: 'pg', connection: url });
  }
  return testDatabase === 'mysql'
    ? knex({ client: 'mysql2', connection: url })
    : knex({ client: 'better-sqlite3', connection: { filename: url.slice('sqlite:'.length) }, useNullAsDefault: true });
}

/** Makes every update of `table` fail inside the database, as a broken constraint or a full disk would. */
export async function refuseUpdates(db: Knex, table: string): Promise<void> {
  if (testDatabase === 'postgres') {
    await db.raw(
      `create function refuse_${table}() returns trigger language plpgsql as $$ begin raise exception 'refused by the test'; end $$`,
    );
    await db.raw(
      `create trigger refuse_${table} before update on ${table} for each row execute function refuse_${table}()`,
    );
    return;
  }
  await db.raw(
    testDatabase === 'mysql'
      ? `create trigger refuse_${table} before update on ${table} for each row signal sqlstate '45000' set message_text = 'refused by the test'`
      : `create trigger refuse_${table} before update on ${table} begin select raise(abort, 'refused by the test'); end`,
  );
}
