import type { Knex } from 'knex';

import { tenantId } from '../shared/tenant.ts';
import type { Queryable } from '../storage/database.ts';
import { jsonColumn } from '../storage/json-column.ts';
import { listPage, type Page } from '../storage/list.ts';
import { openSecret, sealSecret, sealedColumns } from '../storage/sealed-columns.ts';
import { bumpCacheVersion, type CacheName } from '../storage/shared-cache.ts';
import { hookConfigSchema, hookSchema, type Hook } from './schemas.ts';

/** The cache of enabled hooks the outbox reads (its `cache_versions` row comes from 0007_hooks). */
export const hooksCache: CacheName = 'hooks';

type HookRow = {
  id: string;
  name: string;
  events: string;
  config: string;
  signing_key: string;
  enabled: number | boolean;
  created_at: number | string;
};

/** As the hook routes and the configuration import write them, with `hookEventSchema` and `hookConfigSchema`. */
const eventsOf = jsonColumn('hooks', 'events', hookSchema.shape.events);
const configOf = jsonColumn('hooks', 'config', hookConfigSchema);

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
  createdAt: Number(row.created_at),
});

/** Every write of `hooks` goes through here or `deleteHook`: both bump the outbox's cache. */
export async function insertHook(db: Queryable, hook: Hook): Promise<void> {
  await db('hooks').insert({
    id: hook.id,
    name: hook.name,
    events: JSON.stringify(hook.events),
    config: JSON.stringify(hook.config),
    signing_key: sealSecret(db, sealedColumns.hookSigningKeys, hook.id, hook.signingKey),
    enabled: hook.enabled,
    created_at: hook.createdAt,
  });
  await bumpCacheVersion(db, hooksCache);
}

export async function updateHook(db: Queryable, hook: Hook): Promise<void> {
  await db('hooks')
    .where({ id: hook.id })
    .update({
      name: hook.name,
      events: JSON.stringify(hook.events),
      config: JSON.stringify(hook.config),
      signing_key: sealSecret(db, sealedColumns.hookSigningKeys, hook.id, hook.signingKey),
      enabled: hook.enabled,
    });
  await bumpCacheVersion(db, hooksCache);
}

/** Its deliveries and their attempts go with it (foreign keys cascade). */
export async function deleteHook(db: Queryable, id: string): Promise<boolean> {
  const deleted = await db('hooks').where({ id }).delete();
  await bumpCacheVersion(db, hooksCache);
  return deleted > 0;
}

/** A hook answered 410 Gone: it stops receiving events until it is enabled again. */
export async function disableHook(db: Queryable, id: string): Promise<void> {
  await db('hooks').where({ id }).update({ enabled: false });
  await bumpCacheVersion(db, hooksCache);
}

export async function findHook(db: Queryable, id: string): Promise<Hook | undefined> {
  const row = await db('hooks').where({ id }).first<HookRow | undefined>();
  return row && toHook(db, row);
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

/** Enabled hooks by event: what the outbox needs to know, small enough to keep in memory. */
export async function loadSubscriptions(db: Queryable): Promise<Map<string, string[]>> {
  const rows = await db('hooks').where({ enabled: true }).select<Array<Pick<HookRow, 'id' | 'events'>>>('id', 'events');
  const byEvent = new Map<string, string[]>();
  for (const row of rows) {
    for (const event of eventsOf(row.events)) {
      byEvent.set(event, [...(byEvent.get(event) ?? []), row.id]);
    }
  }
  return byEvent;
}

/** Whether any hook exists, enabled or not: while none does, events are not logged. */
export async function anyHookExists(db: Queryable): Promise<boolean> {
  return (await db('hooks').first('id')) !== undefined;
}

/**
 * The hooks that have deliveries due (with their settings): one indexed probe per hook, however
 * long the backlog. Disabled hooks are included: their due deliveries are failed, not sent.
 */
export async function hooksWithDueDeliveries(db: Queryable, now: number): Promise<Hook[]> {
  const rows = await db('hooks')
    .whereExists((due) => {
      due
        .select(db.raw('1'))
        .from('hook_deliveries')
        .whereRaw('?? = ??', ['hook_deliveries.hook_id', 'hooks.id'])
        .where('next_attempt_at', '<=', now);
    })
    .select<HookRow[]>('hooks.*');
  return rows.map((row) => toHook(db, row));
}
