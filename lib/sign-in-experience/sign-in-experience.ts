import type { Knex } from 'knex';

import type { Queryable } from '../storage/database.ts';
import { bumpCacheVersion, lockCache, type SharedCache } from '../storage/shared-cache.ts';
import { findSettings, upsertSettings } from './queries.ts';
import { defaultSignInExperience, type SignInExperience } from './schemas.ts';

export async function readSignInExperience(db: Queryable): Promise<SignInExperience> {
  // Settings saved by an older version may lack newer fields: defaults fill them.
  return { ...defaultSignInExperience, ...(await findSettings(db)) };
}

export const currentSignInExperience = (db: Queryable, cache: SharedCache) =>
  cache.get('settings', 'default', () => readSignInExperience(db));

/**
 * The settings as stored (not from memory), locked until the transaction ends: read so before
 * changing them. The row may not exist yet, so the lock is the settings' cache version row.
 */
export async function signInExperienceForUpdate(trx: Knex.Transaction): Promise<SignInExperience> {
  await lockCache(trx, 'settings');
  return readSignInExperience(trx);
}

export async function saveSignInExperience(db: Queryable, settings: SignInExperience): Promise<void> {
  await upsertSettings(db, settings);
  await bumpCacheVersion(db, 'settings');
}
