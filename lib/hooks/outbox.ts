import type { Knex } from 'knex';

import type { Queryable } from '../storage/database.ts';
import { generateId, generateTimeOrderedId, nextSequence } from '../storage/ids.ts';
import type { SharedCache } from '../storage/shared-cache.ts';
import { insertDeliveries, type NewDelivery } from './delivery/delivery-queries.ts';
import { entityKeyOf } from './delivery/ordering.ts';
import { insertEvent } from './event-log-queries.ts';
import type { HookEvent } from './events.ts';
import { type Actor, thinPayload } from './payloads.ts';
import { anyHookExists, hooksCache, loadSubscriptions, type Subscription } from './queries.ts';

/**
 * What the outbox knows of the hooks, cached. Loaded through the caller's transaction: on SQLite
 * the pool's one connection is that transaction's. The cache is emptied when a hook changes
 * (the 'hooks' version), as the caller's request synced it.
 */
async function cached<T>(trx: Queryable, cache: SharedCache, key: string, load: (db: Queryable) => Promise<T>) {
  const ours = { loaded: false };
  try {
    return await cache.get(hooksCache, key, () => {
      ours.loaded = true;
      return load(trx);
    });
  } catch (error) {
    if (ours.loaded) {
      // Our own transaction failed (a deadlock victim, a Galera certification conflict): the database
      // has rolled it back, and statements after this one would each commit on their own.
      throw error;
    }
    // The shared load ran on another request's transaction, which failed: read on ours.
    return load(trx);
  }
}

/** The enabled hooks subscribed to `event`. */
async function subscribers(trx: Queryable, cache: SharedCache, event: HookEvent): Promise<Subscription[]> {
  return (await cached(trx, cache, 'subscriptions', loadSubscriptions)).get(event) ?? [];
}

const envelopeKeys = ['hookId', 'event', 'createdAt'];

/**
 * The JSON of the envelope followed by the event's fields, which cannot override it: written from
 * the fields' JSON as the event log has it, not serialised again, unless the fields name an
 * envelope key or a key JavaScript orders first (an array index), where the merged object decides.
 */
function fullBody(envelope: Record<string, string>, payload: Record<string, unknown>, payloadJson: string): string {
  const keys = Object.keys(payload);
  if (keys.some((key) => envelopeKeys.includes(key) || /^(0|[1-9]\d*)$/.test(key))) {
    return JSON.stringify(Object.assign({ ...envelope }, payload, envelope));
  }
  const head = JSON.stringify(envelope);
  return payloadJson === '{}' ? head : `${head.slice(0, -1)},${payloadJson.slice(1)}`;
}

/**
 * An event's deliveries to the hooks given, as the outbox writes them and replay writes them again:
 * none to a hook that excludes the application that made the change (the payload's `actor`); the
 * envelope `{hookId, event, createdAt}` then the event's fields (`payloadJson`, their JSON as
 * logged), which cannot override it (a thin hook's: the envelope and `thinPayload`), stored as the
 * exact JSON sent and signed; the entity and commit order an ordered hook goes by.
 */
export function deliveriesOf(
  subscriptions: Subscription[],
  event: HookEvent,
  createdAt: number,
  payload: Record<string, unknown>,
  payloadJson = JSON.stringify(payload),
): NewDelivery[] {
  const actor = payload.actor as Actor | null | undefined;
  const entityId = entityKeyOf(event, payload);
  const sequence = nextSequence();
  const envelopeAt = new Date(createdAt).toISOString();
  return subscriptions
    .filter(({ excludeApplicationIds }) => actor?.type !== 'application' || !excludeApplicationIds.includes(actor.id))
    .map(({ hookId, payload: shape }) => {
      const id = generateId();
      const envelope = { hookId, event, createdAt: envelopeAt };
      return {
        id,
        hookId,
        event,
        entityId,
        sequence,
        payload:
          shape === 'thin'
            ? JSON.stringify({ ...envelope, ...thinPayload(id, payload) })
            : fullBody(envelope, payload, payloadJson),
      };
    });
}

/**
 * Writes `event` to the outbox: one delivery per enabled hook subscribed to it, in the caller's
 * transaction (`deliveriesOf`), so the event exists exactly when the change that causes it
 * commits. The event is also logged (for replay) whenever any hook exists, even disabled or not
 * subscribed now: a hook enabled or subscribed later may be replayed what it missed. Nothing is
 * written while no hook exists. The local dispatcher is woken after the commit.
 */
export async function enqueueEvent(
  trx: Queryable,
  cache: SharedCache,
  event: HookEvent,
  payload: Record<string, unknown>,
): Promise<void> {
  if (!(await cached(trx, cache, 'any', anyHookExists))) {
    return;
  }
  const now = Date.now();
  // Serialised once: the event log's row and the full deliveries' bodies.
  const payloadJson = JSON.stringify(payload);
  await insertEvent(trx, { id: generateTimeOrderedId(), event, payload: payloadJson, createdAt: now });
  const deliveries = deliveriesOf(await subscribers(trx, cache, event), event, now, payload, payloadJson);
  if (deliveries.length === 0) {
    return;
  }
  await insertDeliveries(trx, deliveries, now);
  notifyAfter(trx);
}

const listeners = new Set<() => void>();

/** A dispatcher in this process listens: it claims new deliveries at once instead of at its next poll. */
export function onEnqueued(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** Wakes the dispatchers of this process (enqueueEvent does it after commit by itself). */
export function notifyDispatcher(): void {
  for (const listener of listeners) {
    listener();
  }
}

/**
 * Wakes the dispatchers once `db`'s writes are visible: at once for the pool, after the outermost
 * commit for a transaction (a savepoint's release is not yet visible to others).
 */
export function notifyAfter(db: Queryable): void {
  if (listeners.size === 0) {
    return;
  }
  let trx = db as Partial<Knex.Transaction>;
  if (!trx.isTransaction) {
    setImmediate(notifyDispatcher);
    return;
  }
  while (trx.parentTransaction) {
    trx = trx.parentTransaction;
  }
  trx.executionPromise?.then(
    () => setImmediate(notifyDispatcher),
    () => undefined,
  );
}
