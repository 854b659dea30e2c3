import type { Knex } from 'knex';

import type { Queryable } from '../storage/database.ts';
import { generateId } from '../storage/ids.ts';
import type { SharedCache } from '../storage/shared-cache.ts';
import { insertDeliveries } from './delivery-queries.ts';
import type { HookEvent } from './events.ts';
import { entityKeyOf, nextSequence } from './ordering.ts';
import { thinPayload, type Actor } from './payloads.ts';
import { hooksCache, loadSubscriptions, type Subscription } from './queries.ts';

/**
 * The enabled hooks subscribed to each event. Loaded through the caller's transaction: on SQLite
 * the pool's one connection is that transaction's. The cache is emptied when a hook changes
 * (the 'hooks' version), as the caller's request synced it.
 */
async function subscribers(trx: Queryable, cache: SharedCache, event: HookEvent): Promise<Subscription[]> {
  let byEvent: Map<string, Subscription[]>;
  try {
    byEvent = await cache.get(hooksCache, 'subscriptions', () => loadSubscriptions(trx));
  } catch {
    // The shared load ran on another request's transaction, which failed: read on ours.
    byEvent = await loadSubscriptions(trx);
  }
  return byEvent.get(event) ?? [];
}

/**
 * Writes `event` to the outbox: one delivery per enabled hook subscribed to it, in the caller's
 * transaction, so the event exists exactly when the change that causes it commits. Nothing is
 * written when no hook listens, nor for a hook that excludes the application that made the change
 * (the payload's `actor`). The payload is the envelope `{hookId, event, createdAt, ...payload}` (a
 * thin hook's: the envelope and `thinPayload`), stored as the exact JSON that is sent and signed.
 * The local dispatcher is woken after the commit.
 */
export async function enqueueEvent(
  trx: Queryable,
  cache: SharedCache,
  event: HookEvent,
  payload: Record<string, unknown>,
): Promise<void> {
  const actor = payload.actor as Actor | null | undefined;
  const hooks = (await subscribers(trx, cache, event)).filter(
    ({ excludeApplicationIds }) => actor?.type !== 'application' || !excludeApplicationIds.includes(actor.id),
  );
  if (hooks.length === 0) {
    return;
  }
  const now = Date.now();
  const createdAt = new Date(now).toISOString();
  const entityId = entityKeyOf(event, payload);
  const sequence = nextSequence(now);
  const deliveries = hooks.map(({ hookId, payload: shape }) => {
    const envelope = { hookId, event, createdAt };
    const id = generateId();
    return {
      id,
      hookId,
      event,
      entityId,
      sequence,
      // The envelope's fields come first and cannot be overridden by the payload.
      payload: JSON.stringify(
        shape === 'thin'
          ? { ...envelope, ...thinPayload(id, payload) }
          : Object.assign({ ...envelope }, payload, envelope),
      ),
    };
  });
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
