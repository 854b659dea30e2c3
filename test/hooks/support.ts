import type { Server } from 'node:http';

import { got } from 'got';
import Koa from 'koa';
import type { Knex } from 'knex';

import { loadConfig, type Config } from '../../lib/config/env.ts';
import { activeDispatchers, Dispatcher } from '../../lib/hooks/dispatcher.ts';
import type { HookEvent } from '../../lib/hooks/events.ts';
import { enqueueEvent } from '../../lib/hooks/outbox.ts';
import { hookRoutes } from '../../lib/hooks/routes.ts';
import { jsonBody } from '../../lib/http/body.ts';
import { errorHandler } from '../../lib/http/error-handler.ts';
import { createLogger } from '../../lib/http/logger.ts';
import { Api } from '../../lib/http/route.ts';
import { openDatabase } from '../../lib/storage/database.ts';
import { migrateToLatest } from '../../lib/storage/migrate.ts';
import { SharedCache } from '../../lib/storage/shared-cache.ts';
import { freshDatabaseUrl } from '../support/database.ts';
import { freePort, startService, type HttpClient } from '../support/service.ts';

export type HooksService = {
  url: string;
  config: Config;
  /** /api: the whole service with a management token, or the hooks routes alone (see below). */
  api: HttpClient;
  /** The connection the dispatcher uses: write events on it (on SQLite, the service's only one). */
  db: Knex;
  cache: SharedCache;
  /** The real service, with the hooks routes and dispatcher wired in by lib/app.ts. */
  wired: boolean;
  dispatcher: Dispatcher;
  /** Writes `event` to the outbox in a transaction of its own, as a mutation would. */
  emit(event: HookEvent, payload?: Record<string, unknown>): Promise<void>;
  stop(): Promise<void>;
};

const logLevel = process.env.TEST_LOG_LEVEL ?? 'silent';

/**
 * Starts the service on a database of its own (or `dbUrl`). When lib/app.ts registers the hooks
 * routes and starts a dispatcher, that is the service under test. Until then (or with
 * HOOKS_TEST_MODE=standalone) the hooks routes and a dispatcher run alone on one connection,
 * without the management token check: everything else about them is the same.
 */
export async function startHooksService(options: { dbUrl?: string; env?: Record<string, string> } = {}): Promise<HooksService> {
  const dbUrl = options.dbUrl ?? (await freshDatabaseUrl());
  if (process.env.HOOKS_TEST_MODE !== 'standalone') {
    const before = new Set(activeDispatchers);
    const service = await startService({ dbUrl, env: options.env });
    const dispatcher = [...activeDispatchers].find((candidate) => !before.has(candidate));
    const routes = (await service.api.get('hooks')).statusCode === 200;
    if (dispatcher && routes) {
      const cache = new SharedCache(dispatcher.db);
      return {
        url: service.url,
        config: service.config,
        api: service.api,
        db: dispatcher.db,
        cache,
        wired: true,
        dispatcher,
        emit: emitter(dispatcher.db, cache),
        stop: () => service.stop(),
      };
    }
    await service.stop();
    if (process.env.HOOKS_TEST_MODE === 'service') {
      throw new Error('the hooks routes or the dispatcher are not wired into the service');
    }
  }
  return startStandalone(dbUrl, options.env ?? {});
}

function emitter(db: Knex, cache: SharedCache) {
  return async (event: HookEvent, payload: Record<string, unknown> = {}) => {
    await cache.sync();
    await db.transaction((trx) => enqueueEvent(trx, cache, event, payload));
  };
}

async function startStandalone(dbUrl: string, env: Record<string, string>): Promise<HooksService> {
  const port = await freePort();
  const config = loadConfig({ PORT: String(port), DB_URL: dbUrl, NODE_ENV: 'test', LOG_LEVEL: logLevel, ...env });
  const logger = createLogger({ production: true, logLevel: config.logLevel });
  const db = openDatabase(dbUrl);
  await migrateToLatest(db);
  const cache = new SharedCache(db);
  await cache.sync();

  const app = new Koa();
  app.use(async (_ctx, next) => {
    await cache.sync();
    await next();
  });
  app.use(errorHandler(logger));
  app.use(jsonBody);
  const api = new Api(db);
  hookRoutes(api, db, cache, config);
  api.router.prefix('/api');
  app.use(api.router.routes());
  app.use(api.router.allowedMethods());
  const server: Server = await new Promise((resolve) => {
    const listening = app.listen(port, '127.0.0.1', () => resolve(listening));
  });
  const dispatcher = new Dispatcher({ db, config, logger });
  dispatcher.start();

  const url = `http://127.0.0.1:${port}`;
  const instance = got.extend({ prefixUrl: `${url}/api`, throwHttpErrors: false, retry: { limit: 0 }, responseType: 'json' });
  const call =
    (method: 'get' | 'post' | 'put' | 'patch' | 'delete') =>
    async (path: string, requestOptions: Record<string, unknown> = {}) =>
      (await instance(path, { method, ...requestOptions } as never)) as never;
  return {
    url,
    config,
    api: { get: call('get'), post: call('post'), put: call('put'), patch: call('patch'), delete: call('delete'), got: instance },
    db,
    cache,
    wired: false,
    dispatcher,
    emit: emitter(db, cache),
    async stop() {
      const closing = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closing;
      await dispatcher.stop();
      await db.destroy();
    },
  };
}

/** Creates a hook on `url` for `events` (all enabled) and returns it. */
export async function createHook(service: HooksService, url: string, events: HookEvent[] = ['User.Created'], extra: Record<string, unknown> = {}) {
  const response = await service.api.post('hooks', { json: { name: 'test hook', events, config: { url }, ...extra } });
  if (response.statusCode !== 201) {
    throw new Error(`hook not created: ${response.statusCode} ${JSON.stringify(response.body)}`);
  }
  return response.body as { id: string; signingKey: string; events: string[]; config: { url: string; headers?: Record<string, string> }; enabled: boolean };
}

export async function deliveryRows(service: HooksService, hookId?: string) {
  const query = service.db('hook_deliveries').select('*').orderBy('created_at');
  if (hookId) {
    query.where({ hook_id: hookId });
  }
  return (await query) as Array<{ id: string; hook_id: string; event: string; payload: string; status: string; attempts: number }>;
}
