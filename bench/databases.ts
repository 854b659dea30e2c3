/**
 * The databases a benchmark runs the service on: a fresh SQLite file, or a fresh database on the
 * MySQL/MariaDB server the tests use (TEST_MYSQL_URL), dropped again at the end.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import knex from 'knex';

import { mysqlServerUrl } from '../test/support/database.ts';

export type DatabaseKind = 'sqlite' | 'mysql';

export { mysqlServerUrl };

const created: string[] = [];

/** Whether a MySQL/MariaDB server answers at TEST_MYSQL_URL (as `npm test` decides whether to run on it). */
export async function mysqlReachable(): Promise<boolean> {
  const probe = knex({
    client: 'mysql2',
    connection: { uri: mysqlServerUrl, connectTimeout: 2000 } as never,
    pool: { min: 0, max: 1 },
  });
  try {
    await probe.raw('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await probe.destroy();
  }
}

/** A new, empty database of that kind; its DB_URL. */
export async function freshBenchDatabase(kind: DatabaseKind): Promise<string> {
  if (kind === 'sqlite') {
    return `sqlite:${join(mkdtempSync(join(tmpdir(), 'bench-')), 'bench.sqlite3')}`;
  }
  const name = `bench_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = knex({ client: 'mysql2', connection: mysqlServerUrl });
  try {
    await admin.raw('create database ?? character set utf8mb4 collate utf8mb4_unicode_ci', [name]);
  } finally {
    await admin.destroy();
  }
  created.push(name);
  const url = new URL(mysqlServerUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Drops the MySQL databases this process created. */
export async function dropBenchDatabases(): Promise<void> {
  if (created.length === 0) {
    return;
  }
  const admin = knex({ client: 'mysql2', connection: mysqlServerUrl });
  try {
    for (const name of created.splice(0)) {
      await admin.raw('drop database if exists ??', [name]);
    }
  } finally {
    await admin.destroy();
  }
}

/** "SQLite 3.50.4" or the server's own version string, for the report's machine line. */
export async function databaseVersion(kind: DatabaseKind): Promise<string> {
  if (kind === 'sqlite') {
    const memory = knex({ client: 'better-sqlite3', connection: { filename: ':memory:' }, useNullAsDefault: true });
    try {
      const rows = await memory.raw<Array<{ version: string }>>('select sqlite_version() as version');
      return `SQLite ${rows[0]?.version ?? 'unknown'}`;
    } finally {
      await memory.destroy();
    }
  }
  const admin = knex({ client: 'mysql2', connection: mysqlServerUrl });
  try {
    const [rows] = (await admin.raw('select version() as version')) as [Array<{ version: string }>];
    const version = rows[0]?.version ?? 'unknown';
    return /mariadb/i.test(version) ? `MariaDB ${version}` : `MySQL ${version}`;
  } finally {
    await admin.destroy();
  }
}
