/**
 * The databases a benchmark runs the service on: a fresh SQLite file, or a fresh database on the
 * MySQL/MariaDB (TEST_MYSQL_URL) or PostgreSQL (TEST_POSTGRES_URL) server the tests use, dropped
 * again at the end.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import knex, { type Knex } from 'knex';

import { mysqlServerUrl, postgresServerUrl } from '../test/support/database.ts';

export type DatabaseKind = 'sqlite' | 'mysql' | 'postgres';
export type ServerKind = Exclude<DatabaseKind, 'sqlite'>;

export const servers: Record<ServerKind, { name: string; url: string }> = {
  mysql: { name: 'MySQL/MariaDB', url: mysqlServerUrl },
  postgres: { name: 'PostgreSQL', url: postgresServerUrl },
};

/** A connection to the server's own database, which makes and drops the benchmark's. */
const adminOf = (kind: ServerKind, timeoutMs?: number): Knex =>
  kind === 'postgres'
    ? knex({
        client: 'pg',
        connection: { connectionString: postgresServerUrl, connectionTimeoutMillis: timeoutMs },
        pool: { min: 0, max: 1 },
      })
    : knex({
        client: 'mysql2',
        connection: { uri: mysqlServerUrl, connectTimeout: timeoutMs } as never,
        pool: { min: 0, max: 1 },
      });

const created: Array<{ kind: ServerKind; name: string }> = [];

/** Whether the server answers (as `npm test` decides whether to run on it). */
export async function serverReachable(kind: ServerKind): Promise<boolean> {
  const probe = adminOf(kind, 2000);
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
  const admin = adminOf(kind);
  try {
    await admin.raw(
      kind === 'postgres'
        ? "create database ?? encoding 'UTF8'"
        : 'create database ?? character set utf8mb4 collate utf8mb4_unicode_ci',
      [name],
    );
  } finally {
    await admin.destroy();
  }
  created.push({ kind, name });
  const url = new URL(servers[kind].url);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Drops the server databases this process created. */
export async function dropBenchDatabases(): Promise<void> {
  for (const { kind, name } of created.splice(0)) {
    const admin = adminOf(kind);
    try {
      await admin.raw(kind === 'postgres' ? 'drop database if exists ?? with (force)' : 'drop database if exists ??', [
        name,
      ]);
    } finally {
      await admin.destroy();
    }
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
  const admin = adminOf(kind);
  try {
    if (kind === 'postgres') {
      const { rows } = await admin.raw<{ rows: Array<{ version: string }> }>('show server_version');
      return `PostgreSQL ${rows[0]?.version ?? 'unknown'}`;
    }
    const [rows] = (await admin.raw('select version() as version')) as [Array<{ version: string }>];
    const version = rows[0]?.version ?? 'unknown';
    return /mariadb/i.test(version) ? `MariaDB ${version}` : `MySQL ${version}`;
  } finally {
    await admin.destroy();
  }
}

/**
 * BENCH_DB: `sqlite`, `mysql`, `postgres` or a comma-separated list of them; `both` is SQLite and
 * MySQL (as before PostgreSQL). Unset: SQLite and every server that answers.
 */
export async function benchDatabases(wanted = process.env.BENCH_DB): Promise<DatabaseKind[]> {
  const kinds = new Set<string>(['sqlite', 'mysql', 'postgres']);
  if (wanted !== undefined) {
    const listed = wanted === 'both' ? ['sqlite', 'mysql'] : wanted.split(',').map((name) => name.trim());
    for (const name of listed) {
      if (!kinds.has(name)) {
        throw new Error(`BENCH_DB must list sqlite, mysql or postgres (or be both), not ${wanted}`);
      }
      if (name !== 'sqlite' && !(await serverReachable(name as ServerKind))) {
        throw new Error(
          `BENCH_DB=${wanted} but no ${servers[name as ServerKind].name} answers at ${servers[name as ServerKind].url}`,
        );
      }
    }
    return listed as DatabaseKind[];
  }
  const found: DatabaseKind[] = ['sqlite'];
  for (const kind of ['mysql', 'postgres'] as const) {
    if (await serverReachable(kind)) {
      found.push(kind);
    } else {
      console.error(`No ${servers[kind].name} at ${servers[kind].url}: not benchmarked on it.`);
    }
  }
  return found;
}

/** One database for a benchmark that runs on one (memory, webhooks): BENCH_DB's, SQLite by default. */
export function singleBenchDatabase(): DatabaseKind {
  const wanted = process.env.BENCH_DB ?? 'sqlite';
  if (wanted !== 'sqlite' && wanted !== 'mysql' && wanted !== 'postgres') {
    throw new Error(`BENCH_DB must be sqlite, mysql or postgres here, not ${wanted}`);
  }
  return wanted;
}
