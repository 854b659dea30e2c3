import type { Knex } from 'knex';

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

/**
 * In-memory copies of rows that rarely change (clients, resources, keys). Each instance reads the
 * small `cache_versions` table once per request (`sync`) and drops what another instance changed,
 * so a change is seen by the next request everywhere for the price of one indexed read.
 */
export class SharedCache {
  readonly #versions = new Map<CacheName, number>();
  readonly #stores = new Map<CacheName, Map<string, Promise<unknown>>>();

  constructor(private readonly db: Knex) {}

  #statement: { all(): VersionRow[] } | undefined;

  /**
   * The one query every request makes. On SQLite it runs as a statement prepared once on the
   * connection (knex would build and prepare it each time, a seventh of a token request's CPU);
   * a read there may see a bump of a transaction not yet committed, which only empties a cache
   * early. On MySQL it is an ordinary query.
   */
  async #readVersions(): Promise<VersionRow[]> {
    if (knexClient(this.db).config.client !== 'better-sqlite3') {
      return this.db('cache_versions').select<VersionRow[]>('name', 'version');
    }
    try {
      this.#statement ??= await this.#prepare();
      return this.#statement.all();
    } catch {
      this.#statement = undefined;
      return this.db('cache_versions').select<VersionRow[]>('name', 'version');
    }
  }

  async #prepare(): Promise<{ all(): VersionRow[] }> {
    const client = knexClient(this.db);
    const connection = (await client.acquireConnection()) as { prepare(sql: string): { all(): VersionRow[] } };
    client.releaseConnection(connection);
    return connection.prepare('select name, version from cache_versions');
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
    for (const { name, version } of rows) {
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
