import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import knex, { type Knex } from 'knex';

/** `TEST_DATABASE=mysql` runs the suite on the MySQL/MariaDB server at TEST_MYSQL_URL; otherwise SQLite. */
export const testDatabase = process.env.TEST_DATABASE === 'mysql' ? 'mysql' : 'sqlite';
export const mysqlServerUrl = process.env.TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';

const created: string[] = [];

/** A new, empty database for one service (or several instances sharing it). */
export async function freshDatabaseUrl(): Promise<string> {
  if (testDatabase === 'sqlite') {
    return `sqlite:${join(mkdtempSync(join(tmpdir(), 'identity-test-')), 'identity.sqlite3')}`;
  }
  const name = `t_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
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
export async function dropCreatedDatabases(): Promise<void> {
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

/** A service's database (its `config.dbUrl`), opened beside it as an operator would: to make some statements fail. */
export function openDatabase(url: string): Knex {
  return testDatabase === 'mysql'
    ? knex({ client: 'mysql2', connection: url })
    : knex({ client: 'better-sqlite3', connection: { filename: url.slice('sqlite:'.length) }, useNullAsDefault: true });
}

/** Makes every update of `table` fail inside the database, as a broken constraint or a full disk would. */
export async function refuseUpdates(db: Knex, table: string): Promise<void> {
  await db.raw(
    testDatabase === 'mysql'
      ? `create trigger refuse_${table} before update on ${table} for each row signal sqlstate '45000' set message_text = 'refused by the test'`
      : `create trigger refuse_${table} before update on ${table} begin select raise(abort, 'refused by the test'); end`,
  );
}
