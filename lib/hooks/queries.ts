import type { Knex } from 'knex';

import { tenantId } from '../shared/tenant.ts';
import type { Queryable } from '../storage/database.ts';
import { jsonColumn } from '../storage/json-column.ts';
import { listPage, type Page } from '../storage/list.ts';
import { openSecret, sealedColumns, sealSecret } from '../storage/sealed-columns.ts';
import { bumpCacheVersion, type CacheName } from '../storage/shared-cache.ts';
import { type Hook, hookConfigSchema, hookOrderingSchema, hookSchema } from './schemas.ts';
import { hmacSigner, type HookKeys, type SigningKey } from './signing/signing-keys.ts';

/** The cache of enabled hooks the outbox reads (its `cache_versions` row comes from 0007_hooks). */
export const hooksCache: CacheName = 'hooks';

type HookRow = {
  id: string;
  name: string;
  events: string;
  config: string;
  signing_key: string;
  enabled: number | boolean;
  disabled_reason: string | null;
  ordering: string;
  rate_limit_per_second: number | null;
  notify_email: string | null;
  created_at: number | string;
  signature_scheme: Hook['signatureScheme'];
  signing_private_key: string | null;
  previous_signing_key: string | null;
  previous_key_until: number | string | null;
  payload: Hook['payload'];
  exclude_application_ids: string | null;
};

/** A hook with the keys it signs with: for the dispatcher and the test request, never an answer. */
export type SigningHook = Hook & { keys: HookKeys };

/** As the hook routes and the configuration import write them, with `hookEventSchema` and `hookConfigSchema`. */
const eventsOf = jsonColumn('hooks', 'events', hookSchema.shape.events);
const configOf = jsonColumn('hooks', 'config', hookConfigSchema);
const excludedOf = jsonColumn('hooks', 'exclude_application_ids', hookSchema.shape.excludeApplicationIds);

/** The signing key is opened as the row is read: once per load, not per delivery. */
const toHook = (db: Queryable, row: HookRow): Hook => ({
  tenantId,
  id: row.id,
  name: row.name,
  event: null,
  events: eventsOf(row.events),
  config: configOf(row.config),
  signingKey: openSecret(db, sealedColumns.hookSigningKeys, row.id, row.signing_key),
  enabled: Boolean(row.enabled),
  disabledReason: row.disabled_reason,
  ordering: hookOrderingSchema.catch('none').parse(row.ordering),
  rateLimitPerSecond: row.rate_limit_per_second,
  notifyEmail: row.notify_email,
  createdAt: Number(row.created_at),
  signatureScheme: row.signature_scheme,
  payload: row.payload,
  excludeApplicationIds: row.exclude_application_ids ? excludedOf(row.exclude_application_ids) : [],
});

function toSigningHook(db: Queryable, row: HookRow): SigningHook {
  const hook = toHook(db, row);
  const current: SigningKey =
    hook.signatureScheme === 'ed25519' && row.signing_private_key
      ? {
          scheme: 'ed25519',
          privateJwk: openSecret(db, sealedColumns.hookPrivateKeys, row.id, row.signing_private_key),
        }
      : { scheme: 'hmac-sha256', secret: hook.signingKey };
  const previous = row.previous_signing_key
    ? (JSON.parse(openSecret(db, sealedColumns.hookPreviousKeys, row.id, row.previous_signing_key)) as SigningKey)
    : undefined;
  return {
    ...hook,
    keys: previous ? { current, previous, previousUntil: Number(row.previous_key_until) } : { current },
  };
}

/** The key columns as `keys` has them, sealed. */
const keyColumns = (db: Queryable, id: string, { current, previous, previousUntil }: HookKeys) => ({
  signing_private_key:
    current.scheme === 'ed25519' ? sealSecret(db, sealedColumns.hookPrivateKeys, id, current.privateJwk) : null,
  previous_signing_key: previous ? sealSecret(db, sealedColumns.hookPreviousKeys, id, JSON.stringify(previous)) : null,
  previous_key_until: previous ? (previousUntil ?? null) : null,
});

type DeliverySettings =
  | 'disabledReason'
  | 'ordering'
  | 'rateLimitPerSecond'
  | 'notifyEmail'
  | 'signatureScheme'
  | 'payload'
  | 'excludeApplicationIds';

/** A hook to store: the delivery settings it leaves out take their defaults. */
export type NewHook = Omit<Hook, DeliverySettings> & Partial<Pick<Hook, DeliverySettings>>;

/** The columns of the settings beyond Logto's that the routes write. */
const settingsColumns = (hook: NewHook) => ({
  enabled: hook.enabled,
  disabled_reason: hook.disabledReason ?? null,
  ordering: hook.ordering ?? 'none',
  rate_limit_per_second: hook.rateLimitPerSecond ?? null,
  notify_email: hook.notifyEmail ?? null,
  signature_scheme: hook.signatureScheme ?? 'hmac-sha256',
  payload: hook.payload ?? 'full',
  exclude_application_ids: JSON.stringify(hook.excludeApplicationIds ?? []),
});

/** Every write of `hooks` goes through here or `deleteHook`: both bump the outbox's cache. */
export async function insertHook(
  db: Queryable,
  hook: NewHook,
  keys: HookKeys = hmacSigner(hook.signingKey).keys,
): Promise<void> {
  await db('hooks').insert({
    ...keyColumns(db, hook.id, keys),
    id: hook.id,
    name: hook.name,
    events: JSON.stringify(hook.events),
    config: JSON.stringify(hook.config),
    signing_key: sealSecret(db, sealedColumns.hookSigningKeys, hook.id, hook.signingKey),
    ...settingsColumns(hook),
    created_at: hook.createdAt,
  });
  await bumpCacheVersion(db, hooksCache);
}

/** `keys` given: the hook's keys are replaced too (a rotation, a change of scheme). */
export async function updateHook(db: Queryable, hook: Hook, keys?: HookKeys): Promise<void> {
  await db('hooks')
    .where({ id: hook.id })
    .update({
      ...(keys && keyColumns(db, hook.id, keys)),
      name: hook.name,
      events: JSON.stringify(hook.events),
      config: JSON.stringify(hook.config),
      signing_key: sealSecret(db, sealedColumns.hookSigningKeys, hook.id, hook.signingKey),
      ...settingsColumns(hook),
    });
  await bumpCacheVersion(db, hooksCache);
}

/** Its deliveries and their attempts go with it (foreign keys cascade). */
export async function deleteHook(db: Queryable, id: string): Promise<boolean> {
  const deleted = await db('hooks').where({ id }).delete();
  await bumpCacheVersion(db, hooksCache);
  return deleted > 0;
}

/**
 * The service disables a hook (it answered 410 Gone, or failed for too long): it stops receiving
 * events until it is enabled again. False when it was disabled already (or is gone).
 */
export async function disableHook(db: Queryable, id: string, reason: string): Promise<boolean> {
  const updated = await db('hooks').where({ id, enabled: true }).update({ enabled: false, disabled_reason: reason });
  await bumpCacheVersion(db, hooksCache);
  return updated > 0;
}

export async function findHook(db: Queryable, id: string): Promise<Hook | undefined> {
  const row = await db('hooks').where({ id }).first<HookRow | undefined>();
  return row && toHook(db, row);
}

export async function findSigningHook(db: Queryable, id: string): Promise<SigningHook | undefined> {
  const row = await db('hooks').where({ id }).first<HookRow | undefined>();
  return row && toSigningHook(db, row);
}

/** The hook, its row locked until the transaction ends: read so before changing it. */
export async function findHookForUpdate(trx: Knex.Transaction, id: string): Promise<Hook | undefined> {
  const row = await trx('hooks').where({ id }).forUpdate().first<HookRow | undefined>();
  return row && toHook(trx, row);
}

export async function listHooks(db: Queryable, page: Page): Promise<{ items: Hook[]; total: number }> {
  const { rows, total } = await listPage<HookRow>(db('hooks').select('*'), page);
  return { items: rows.map((row) => toHook(db, row)), total };
}

/** What the outbox needs to know of an enabled hook to write its deliveries. */
export type Subscription = Pick<Hook, 'payload' | 'excludeApplicationIds'> & { hookId: string };

/** Enabled hooks by event: what the outbox needs to know, small enough to keep in memory. */
export async function loadSubscriptions(db: Queryable): Promise<Map<string, Subscription[]>> {
  const rows = await db('hooks')
    .where({ enabled: true })
    .select<Array<Pick<HookRow, 'id' | 'events' | 'payload' | 'exclude_application_ids'>>>(
      'id',
      'events',
      'payload',
      'exclude_application_ids',
    );
  const byEvent = new Map<string, Subscription[]>();
  for (const row of rows) {
    const subscription: Subscription = {
      hookId: row.id,
      payload: row.payload,
      excludeApplicationIds: row.exclude_application_ids ? excludedOf(row.exclude_application_ids) : [],
    };
    for (const event of eventsOf(row.events)) {
      byEvent.set(event, [...(byEvent.get(event) ?? []), subscription]);
    }
  }
  return byEvent;
}

/** Every hook's id, enabled or not. */
export async function listHookIds(db: Queryable): Promise<string[]> {
  return db('hooks').pluck('id');
}

/** Whether any hook exists, enabled or not: while none does, events are not logged. */
export async function anyHookExists(db: Queryable): Promise<boolean> {
  return (await db('hooks').first('id')) !== undefined;
}

/**
 * The hooks that have deliveries due (with their settings): one indexed probe per hook, however
 * long the backlog. Disabled hooks are included: their due deliveries are failed, not sent.
 */
export async function hooksWithDueDeliveries(db: Queryable, now: number): Promise<SigningHook[]> {
  const rows = await db('hooks')
    .whereExists((due) => {
      due
        .select(db.raw('1'))
        .from('hook_deliveries')
        .whereRaw('?? = ??', ['hook_deliveries.hook_id', 'hooks.id'])
        .where('next_attempt_at', '<=', now);
    })
    .select<HookRow[]>('hooks.*');
  return rows.map((row) => toSigningHook(db, row));
}
