import type { Knex } from 'knex';

import type { Queryable } from '../storage/database.ts';
import { bumpCacheVersion, lockCache, type SharedCache } from '../storage/shared-cache.ts';
import { assertCustomUiNotSet } from './custom-ui.ts';
import { assertSupported } from './email-blocklist.ts';
import { assertMfaSettings } from './mfa-settings.ts';
import { assertPasswordExpirationReachable } from './password-expiration.ts';
import { findSettings, upsertSettings } from './queries.ts';
import { defaultSignInExperience, type SignInExperience } from './schemas.ts';
import { assertSignUpSettings } from './sign-up-settings.ts';

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

/**
 * The rules a change of the settings must keep, judged on the settings it leads to (`next`) and on
 * what it sets (`change`): the route's and the import's (which sets everything).
 */
export function assertSignInExperienceChange(
  next: SignInExperience,
  change: { mfa?: unknown; signIn?: unknown } & Partial<
    Pick<SignInExperience, 'signUp' | 'emailBlocklistPolicy' | 'customUiCsp' | 'customUiAssets'>
  >,
): void {
  assertMfaSettings(next, change);
  assertCustomUiNotSet(change);
  assertPasswordExpirationReachable(next.passwordExpiration, next.forgotPasswordMethods);
  if (change.signUp) {
    assertSignUpSettings(change.signUp);
  }
  if (change.emailBlocklistPolicy) {
    assertSupported(change.emailBlocklistPolicy);
  }
}
