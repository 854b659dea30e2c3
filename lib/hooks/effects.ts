import type { RouteEffects } from '../http/api/route.ts';
import type { Effects } from '../shared/event-data.ts';
import type { Queryable } from '../storage/database.ts';
import type { SharedCache } from '../storage/shared-cache.ts';
import { enqueueEvent } from './outbox.ts';
import { buildPayload, type EventRequest, requestOf } from './payloads.ts';

/**
 * Effects written to the outbox at once, in `trx`, each payload built by `buildPayload` for the
 * request that caused it (none: a change made outside a request). Every producer's events go
 * through here: the management API's table, the end user's flows, JIT provisioning, the console.
 */
export function outboxEffects(
  trx: Queryable,
  cache: SharedCache,
  request?: EventRequest | (() => EventRequest),
): Effects {
  return {
    async emit(event, data) {
      const from = typeof request === 'function' ? request() : request;
      await enqueueEvent(trx, cache, event, buildPayload(event, data, from));
    },
  };
}

/**
 * A group's write routes whose events their handlers emit themselves, written at once in the
 * route's transaction (the console's first administrator). The management API's routes take
 * theirs from its endpoint → event table instead (lib/management/route-events.ts).
 */
export function emittedEvents(cache: SharedCache): RouteEffects {
  return {
    declares: () => false,
    open: (trx, _spec, input, ctx) => ({
      effects: outboxEffects(trx, cache, () => requestOf(ctx, input.params)),
      close: () => Promise.resolve(),
    }),
  };
}
