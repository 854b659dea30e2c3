import type { Knex } from 'knex';

import type { Queryable } from '../../storage/database.ts';
import { generateId } from '../../storage/ids.ts';
import { anyJsonObject, jsonColumn } from '../../storage/json-column.ts';
import { openConfigSecret, sealConfigSecret, sealedColumns } from '../../storage/sealed-columns.ts';
import { bumpCacheVersion, lockCache, type SharedCache } from '../../storage/shared-cache.ts';
import { type CaptchaConfig, captchaConfigSchema, type CaptchaProvider } from './captcha-schemas.ts';

/*
 * `captcha_providers`: the one captcha provider, its configuration as JSON with the secret key
 * sealed in it. It shares the sign-in experience's cache and lock ('settings'): the settings'
 * writers are its writers' neighbours, and its readers read the settings too.
 */

type CaptchaProviderRow = { id: string; config: string; created_at: number | string; updated_at: number | string };

const sealedIn = sealedColumns.captchaProviderSecrets;
const storedConfigOf = jsonColumn('captcha_providers', 'config', anyJsonObject);

async function readCaptchaProvider(db: Queryable): Promise<CaptchaProvider | undefined> {
  const row = await db('captcha_providers').orderBy('created_at').first<CaptchaProviderRow | undefined>();
  if (!row) {
    return undefined;
  }
  return {
    id: row.id,
    config: captchaConfigSchema.parse(openConfigSecret(db, sealedIn, row.id, storedConfigOf(row.config))),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

/** The provider, from memory: every sign-in step that checks a captcha reads it. */
export const currentCaptchaProvider = (db: Queryable, cache: SharedCache) =>
  cache.get('settings', 'captchaProvider', () => readCaptchaProvider(db));

/** The provider as stored, locked with the settings until the transaction ends: read so before changing it. */
export async function captchaProviderForUpdate(trx: Knex.Transaction): Promise<CaptchaProvider | undefined> {
  await lockCache(trx, 'settings');
  return readCaptchaProvider(trx);
}

/** Replaces the provider's configuration, or creates the provider; `existing` as captchaProviderForUpdate read it. */
export async function saveCaptchaProvider(
  trx: Knex.Transaction,
  existing: CaptchaProvider | undefined,
  config: CaptchaConfig,
): Promise<CaptchaProvider> {
  const now = Date.now();
  const id = existing?.id ?? generateId();
  const stored = JSON.stringify(sealConfigSecret(trx, sealedIn, id, config));
  if (existing) {
    await trx('captcha_providers').where({ id }).update({ config: stored, updated_at: now });
  } else {
    await trx('captcha_providers').insert({ id, config: stored, created_at: now, updated_at: now });
  }
  await bumpCacheVersion(trx, 'settings');
  return { id, config, createdAt: existing?.createdAt ?? now, updatedAt: now };
}

export async function deleteCaptchaProviders(trx: Knex.Transaction): Promise<void> {
  await trx('captcha_providers').delete();
  await bumpCacheVersion(trx, 'settings');
}
