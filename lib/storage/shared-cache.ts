import type { Knex } from 'knex';

import type { Queryable } from './database.ts';
import { openVersionWatcher, type VersionRow, type VersionWatcher } from './version-watchers.ts';

/**
 * What may be cached in memory; each has a row in `cache_versions`. `roles` covers every table that
 * decides which scopes a role grants (roles, their scopes, their holders); `revokedTokens` the
 * denylist of revoked JWT access tokens; `throttles` the sources refused after failed
 * credentials (failure-throttle.ts).
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
  | 'throttles'
  | 'trustedIssuers';

/** Every writer of a cached table calls this in the same transaction as its change. */
export async function bumpCacheVersion(db: Queryable, name: CacheName): Promise<void> {
  await db('cache_versions').where({ name }).increment('version', 1);
}

const maxEntries = 50_000;

/**
 * Serialises writers of one cache's tables across instances. A no-op update takes the row's write
 * lock on MySQL and the database's on SQLite, where a read first would deadlock two writers.
 */
export async function lockCache(trx: Queryable, name: CacheName): Promise<void> {
  await trx('cache_versions')
    .where({ name })
    .update({ version: trx.raw('version') });
}

/**
 * In-memory copies of rows that rarely change (clients, resources, keys). Each instance reads the
 * small `cache_versions` table before each request (`sync`: one read for the requests that arrived
 * together) and drops what another instance changed, so a change is seen by the next request
 * everywhere for the price of one indexed read.
 */
export class SharedCache {
  readonly #versions = new Map<CacheName, number>();
  readonly #stores = new Map<CacheName, Map<string, Promise<unknown>>>();

  #watcher: VersionWatcher | undefined;

  private readonly db: Knex;

  constructor(db: Knex) {
    this.db = db;
    this.#watcher = openVersionWatcher(db);
  }

  /**
   * The one read every request makes, on a connection of its own (`version-watchers.ts`): on a
   * SQLite file only when something was committed since the last read, on MySQL a plain query
   * without the builder and the pool. Through the pool when that connection fails.
   */
  async #readVersions(): Promise<VersionRow[] | undefined> {
    if (this.#watcher) {
      try {
        return await this.#watcher.changedVersions();
      } catch {
        // The watcher opens a new connection next time; this read goes through the pool.
      }
    }
    return this.db('cache_versions').select<VersionRow[]>('name', 'version');
  }

  /** Closes what the cache opened beside the pool. */
  close(): void {
    this.#watcher?.close();
    this.#watcher = undefined;
  }

  #running: Promise<void> | undefined;
  #next: Promise<void> | undefined;

  /**
   * Brings the versions up to date for a request that has just arrived: the read starts after the
   * request called, so a change committed before the request began is always seen by it. The read
   * waits for the end of the event loop's poll phase (`setImmediate`), and every request that arrived
   * in that phase shares it: under load one read serves a batch of requests instead of one each.
   */
  sync(): Promise<void> {
    this.#next ??= (this.#running ?? Promise.resolve())
      .catch(() => undefined)
      .then(() => new Promise<void>((resolve) => setImmediate(resolve)))
      .then(() => {
        this.#next = undefined;
        this.#running = this.#read().finally(() => (this.#running = undefined));
        return this.#running;
      });
    return this.#next;
  }

  async #read(): Promise<void> {
    const rows = await this.#readVersions();
    for (const { name, version } of rows ?? []) {
      if (this.#versions.get(name as CacheName) !== version) {
        this.#versions.set(name as CacheName, version);
        this.#stores.get(name as CacheName)?.clear();
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
