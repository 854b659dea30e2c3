import type { Knex } from 'knex';

import Database from 'better-sqlite3';

import { knexClient, type Queryable } from './database.ts';

/**
 * What may be cached in memory; each has a row in `cache_versions`. `roles` covers every table that
 * decides which scopes a role grants (roles, their scopes, their holders); `revokedTokens` the
 * denylist of revoked JWT access tokens; `throttles` the client ids and addresses refused after failed
 * client authentications.
 */
export type CacheName =
  | 'applications'
  | 'resources'
  | 'roles'
  | 'keys'
  | 'settings'
  | 'users'
  | 'hooks'
  | 'connectors'
  | 'revokedTokens'
  | 'throttles';

/** Every writer of a cached table calls this in the same transaction as its change. */
export async function bumpCacheVersion(db: Queryable, name: CacheName): Promise<void> {
  await db('cache_versions').where({ name }).increment('version', 1);
}

const maxEntries = 50_000;

type VersionRow = { name: CacheName; version: number };

/**
 * Serialises writers of one cache's tables across instances. A no-op update takes the row's write
 * lock on MySQL and the database's on SQLite, where a read first would deadlock two writers.
 */
export async function lockCache(trx: Queryable, name: CacheName): Promise<void> {
  await trx('cache_versions')
    .where({ name })
    .update({ version: trx.raw('version') });
}

type VersionWatcher = { changedVersions(): VersionRow[] | undefined; close(): void };

/**
 * A read-only connection to a SQLite file that answers the versions when another connection has
 * committed since it last looked. Undefined for MySQL and an in-memory database (no second
 * connection sees it), or when the file cannot be opened so.
 */
function openVersionWatcher(db: Knex): VersionWatcher | undefined {
  const { client, connection } = knexClient(db).config as { client: string; connection?: { filename?: string } };
  const filename = client === 'better-sqlite3' ? connection?.filename : undefined;
  if (filename === undefined || filename === ':memory:') {
    return undefined;
  }
  let watcher: Database.Database;
  try {
    watcher = new Database(filename, { readonly: true, fileMustExist: true });
  } catch {
    return undefined;
  }
  const dataVersion = watcher.prepare<[], number>('pragma data_version').pluck();
  const versions = watcher.prepare<[], VersionRow>('select name, version from cache_versions');
  let seen: number | undefined;
  return {
    changedVersions() {
      const now = dataVersion.get();
      if (now === seen) {
        return undefined;
      }
      seen = now;
      return versions.all();
    },
    close: () => watcher.close(),
  };
}

/**
 * In-memory copies of rows that rarely change (clients, resources, keys). Each instance reads the
 * small `cache_versions` table once per request (`sync`) and drops what another instance changed,
 * so a change is seen by the next request everywhere for the price of one indexed read.
 */
export class SharedCache {
  readonly #versions = new Map<CacheName, number>();
  readonly #stores = new Map<CacheName, Map<string, Promise<unknown>>>();

  #watcher: VersionWatcher | undefined;

  constructor(private readonly db: Knex) {
    this.#watcher = openVersionWatcher(db);
  }

  /**
   * The one read every request makes. On a SQLite file it asks a read-only connection of its own
   * whether anything was committed since its last look (`pragma data_version`, a counter in the
   * file's shared memory that moves on every commit by another connection, this process's pool
   * included) and reads the rows only then: a fifth of the cost of reading them. Elsewhere it is
   * an ordinary query.
   */
  async #readVersions(): Promise<VersionRow[] | undefined> {
    if (!this.#watcher) {
      return this.db('cache_versions').select<VersionRow[]>('name', 'version');
    }
    try {
      return this.#watcher.changedVersions();
    } catch {
      // A file moved or removed under a running service: the pool reports it on its next query.
      this.close();
      return this.db('cache_versions').select<VersionRow[]>('name', 'version');
    }
  }

  /** Closes what the cache opened beside the pool. */
  close(): void {
    this.#watcher?.close();
    this.#watcher = undefined;
  }

  #running: Promise<void> | undefined;
  #queued: Promise<void> | undefined;

  /**
   * Brings the versions up to date for a request that has just arrived. Concurrent requests share
   * reads, but never one that started before they arrived: a change committed before a request
   * began is always seen by it.
   */
  sync(): Promise<void> {
    if (!this.#running) {
      this.#running = this.#read().finally(() => (this.#running = undefined));
      return this.#running;
    }
    this.#queued ??= this.#running
      .catch(() => undefined)
      .then(() => {
        this.#queued = undefined;
        return this.sync();
      });
    return this.#queued;
  }

  async #read(): Promise<void> {
    const rows = await this.#readVersions();
    for (const { name, version } of rows ?? []) {
      if (this.#versions.get(name) !== version) {
        this.#versions.set(name, version);
        this.#stores.get(name)?.clear();
      }
    }
  }

  version(name: CacheName): number | undefined {
    return this.#versions.get(name);
  }

  get<T>(name: CacheName, key: string, load: () => Promise<T>): Promise<T> {
    let store = this.#stores.get(name);
    if (!store) {
      store = new Map();
      this.#stores.set(name, store);
    }
    let entry = store.get(key) as Promise<T> | undefined;
    if (!entry) {
      if (store.size >= maxEntries) {
        // Per-user entries could grow without bound between changes: drop the oldest.
        store.delete(store.keys().next().value as string);
      }
      const loading = load();
      entry = loading;
      store.set(key, loading);
      loading.catch(() => store.delete(key));
    }
    return entry;
  }
}
