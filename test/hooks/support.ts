import type { Knex } from 'knex';

import type { Config } from '../../lib/config/env.ts';
import { claimDeliveries, recordAttempts } from '../../lib/hooks/delivery/deliveries.ts';
import type { ClaimedDelivery } from '../../lib/hooks/delivery/delivery-queries.ts';
import { ensureDispatchRows } from '../../lib/hooks/delivery/dispatch-queries.ts';
import { activeDispatchers, Dispatcher } from '../../lib/hooks/delivery/dispatcher.ts';
import type { HookEvent } from '../../lib/hooks/events.ts';
import { enqueueEvent } from '../../lib/hooks/outbox.ts';
import { SharedCache } from '../../lib/storage/shared-cache.ts';
import { freshDatabaseUrl } from '../support/database.ts';
import { type HttpClient, startService } from '../support/service.ts';

export type HooksService = {
  url: string;
  config: Config;
  /** /api with a management token. */
  api: HttpClient;
  /** The connection the dispatcher uses: write events on it (on SQLite, the service's only one). */
  db: Knex;
  cache: SharedCache;
  dispatcher: Dispatcher;
  /** Writes `event` to the outbox in a transaction of its own, as a mutation would. */
  emit(event: HookEvent, payload?: Record<string, unknown>): Promise<void>;
  stop(): Promise<void>;
};

/**
 * Starts the real service on a database of its own (or `dbUrl`) and finds the dispatcher it
 * started, so tests can write events on its connection and read its counters.
 */
export async function startHooksService(
  options: { dbUrl?: string; env?: Record<string, string> } = {},
): Promise<HooksService> {
  const before = new Set(activeDispatchers);
  const service = await startService({ dbUrl: options.dbUrl ?? (await freshDatabaseUrl()), env: options.env });
  const dispatcher = [...activeDispatchers].find((candidate) => !before.has(candidate))!;
  const cache = new SharedCache(dispatcher.db);
  return {
    url: service.url,
    config: service.config,
    api: service.api,
    db: dispatcher.db,
    cache,
    dispatcher,
    emit: async (event, payload = {}) => {
      await cache.sync();
      await dispatcher.db.transaction((trx) => enqueueEvent(trx, cache, event, payload));
    },
    stop: () => service.stop(),
  };
}

/** Creates a hook on `url` for `events` (all enabled) and returns it. */
export async function createHook(
  service: HooksService,
  url: string,
  events: HookEvent[] = ['User.Created'],
  extra: Record<string, unknown> = {},
) {
  const response = await service.api.post('hooks', { json: { name: 'test hook', events, config: { url }, ...extra } });
  if (response.statusCode !== 201) {
    throw new Error(`hook not created: ${response.statusCode} ${JSON.stringify(response.body)}`);
  }
  return response.body as {
    id: string;
    signingKey: string;
    events: string[];
    config: { url: string; headers?: Record<string, string> };
    enabled: boolean;
  };
}

export async function deliveryRows(service: HooksService, hookId?: string) {
  const query = service.db('hook_deliveries').select('*').orderBy('created_at');
  if (hookId) {
    query.where({ hook_id: hookId });
  }
  return (await query) as Array<{
    id: string;
    hook_id: string;
    event: string;
    payload: string;
    status: string;
    attempts: number;
  }>;
}

/** A dispatcher's claim of up to `room` of one hook's due deliveries at `now`, made by hand. */
export async function claimByHand(service: HooksService, hookId: string, room: number, now: number) {
  // As a dispatcher does before it claims for a hook it has not seen.
  await ensureDispatchRows(service.db, [hookId]);
  const { claimed } = await claimDeliveries(service.db, {
    rooms: new Map([[hookId, room]]),
    hooks: new Map([[hookId, { ordering: 'none', rateLimitPerSecond: null }]]),
    maxInFlight: 1000,
    leaseMs: 1000,
    now,
  });
  return claimed;
}

/** Records the attempts of deliveries claimed by hand; for each, whether its claim still held. */
export async function settleByHand(
  deliveries: ClaimedDelivery[],
  statusCode: number,
  now: number,
  service: HooksService,
) {
  const { kept } = await recordAttempts(
    service.db,
    deliveries.map((delivery) => ({
      delivery,
      result: { statusCode, durationMs: 1 },
      outcome:
        statusCode === 200 ? { status: 'succeeded' as const } : { status: 'failed' as const, disableHook: false },
      now,
    })),
    { disableAfterSeconds: 432_000 },
  );
  return kept;
}

/** Deletes every hook: one test's hooks must not receive the next test's events. */
export async function deleteAllHooks(service: HooksService): Promise<void> {
  const hooks = await service.api.get('hooks');
  for (const { id } of hooks.body as Array<{ id: string }>) {
    await service.api.delete(`hooks/${id}`);
  }
}
