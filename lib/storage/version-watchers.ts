import Database from 'better-sqlite3';
import type { Knex } from 'knex';
import type mysql from 'mysql2';
import type pg from 'pg';

import { knexClient } from './database.ts';

export type VersionRow = { name: string; version: number };

/**
 * Reads `cache_versions` on a connection of its own, beside the pool: the read every request makes
 * (lib/storage/shared-cache.ts) without the query builder and the pool's bookkeeping, which cost
 * more than the read itself. `undefined`: nothing was committed since the last read. A failure
 * drops the connection (the next read opens a new one) and is thrown, so the caller reads through
 * the pool, which reports a database that is down as every query does.
 */
export type VersionWatcher = {
  changedVersions(): VersionRow[] | undefined | Promise<VersionRow[]>;
  close(): void;
};

const versionsQuery = 'select name, version from cache_versions';

/**
 * SQLite: a read-only connection asks `pragma data_version`, a counter in the file's shared memory
 * that moves on every commit by another connection (this process's pool included), and reads the
 * rows only when it moved; it sees only committed rows.
 */
function sqliteWatcher(filename: string): VersionWatcher {
  let open: { connection: Database.Database; changedVersions(): VersionRow[] | undefined } | undefined;
  const connect = () => {
    const connection = new Database(filename, { readonly: true, fileMustExist: true });
    const dataVersion = connection.prepare<[], number>('pragma data_version').pluck();
    const versions = connection.prepare<[], VersionRow>(versionsQuery);
    let seen: number | undefined;
    return {
      connection,
      changedVersions() {
        const now = dataVersion.get();
        if (now === seen) {
          return undefined;
        }
        seen = now;
        return versions.all();
      },
    };
  };
  const close = () => {
    open?.connection.close();
    open = undefined;
  };
  return {
    changedVersions() {
      try {
        open ??= connect();
        return open.changedVersions();
      } catch (error) {
        close();
        throw error;
      }
    },
    close,
  };
}

/**
 * MySQL: one connection of its own, the plain query on it. The driver is loaded here rather than at
 * start, so that a service on SQLite never loads it (about 13 MB resident).
 */
function mysqlWatcher(options: mysql.ConnectionOptions): VersionWatcher {
  const driver = import('mysql2');
  let connection: mysql.Connection | undefined;
  const close = () => {
    connection?.destroy();
    connection = undefined;
  };
  return {
    async changedVersions() {
      if (!connection) {
        const { default: mysqlDriver } = await driver;
        // A lost connection fails the query in flight; without a listener it would throw as well.
        connection ??= mysqlDriver.createConnection(options).on('error', close);
      }
      const current = connection;
      return new Promise<VersionRow[]>((resolve, reject) => {
        current.query<mysql.RowDataPacket[]>(versionsQuery, (error, rows) => {
          if (error) {
            if (connection === current) {
              close();
            }
            reject(error);
            return;
          }
          resolve(rows as VersionRow[]);
        });
      });
    },
    close,
  };
}

/** PostgreSQL: likewise, one `pg` client of its own, loaded when first needed. */
function postgresWatcher(options: pg.ClientConfig): VersionWatcher {
  const driver = import('pg');
  let client: pg.Client | undefined;
  const close = () => {
    void client?.end().catch(() => undefined);
    client = undefined;
  };
  return {
    async changedVersions() {
      if (!client) {
        const { default: pgDriver } = await driver;
        const opening = new pgDriver.Client(options);
        // A lost connection fails the query in flight; without a listener it would throw as well.
        opening.on('error', () => {
          if (client === opening) {
            close();
          }
        });
        client = opening;
        try {
          await opening.connect();
        } catch (error) {
          close();
          throw error;
        }
      }
      const current = client;
      try {
        return (await current.query<VersionRow>(versionsQuery)).rows;
      } catch (error) {
        if (client === current) {
          close();
        }
        throw error;
      }
    },
    close,
  };
}

/** The watcher for the pool's database; undefined for an in-memory SQLite database (no other connection sees it). */
export function openVersionWatcher(db: Knex): VersionWatcher | undefined {
  const { client, connection } = knexClient(db).config as {
    client: string;
    connection?: { filename?: string } & mysql.ConnectionOptions & pg.ClientConfig;
  };
  if (client === 'better-sqlite3') {
    const filename = connection?.filename;
    return filename === undefined || filename === ':memory:' ? undefined : sqliteWatcher(filename);
  }
  if (!connection) {
    return undefined;
  }
  return client === 'pg' ? postgresWatcher(connection) : client === 'mysql2' ? mysqlWatcher(connection) : undefined;
}
