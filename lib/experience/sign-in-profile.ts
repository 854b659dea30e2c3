import type { Knex } from 'knex';
import type { Context } from 'koa';

import { RequestError } from '../http/errors.ts';
import { provisionByEmailDomain } from '../organizations/jit/jit-provisioning.ts';
import type { SignInExperience } from '../sign-in-experience/schemas.ts';
import type { Queryable } from '../storage/database.ts';
import type { SharedCache } from '../storage/shared-cache.ts';
import type { UserChanges, UserRow } from '../users/queries.ts';
import { assertIdentifiersFree, changeUser, getUserRowForUpdate } from '../users/users.ts';
import { assertEmailForAccount, missingProfile, profileFromRecord } from './identification.ts';
import type { ExperienceState, PendingProfile } from './state-queries.ts';

/*
 * The profile an interaction adds to an account that exists (sign-in, or a registration's account
 * once created): a username, a password, a verified email or phone, kept in the state by
 * `POST /experience/profile` and written at submit, as Logto does.
 */

/** Logto's rule: the interaction fills what the account lacks, it never replaces what it has (422). */
export function assertNotInAccount(user: UserRow | undefined, addition: PendingProfile): void {
  if (!user) {
    return;
  }
  const checks = [
    [addition.username, user.username, 'user.username_exists_in_profile'],
    [addition.primaryEmail, user.primary_email, 'user.email_exists_in_profile'],
    [addition.primaryPhone, user.primary_phone, 'user.phone_exists_in_profile'],
    [addition.passwordDigest, user.password_digest, 'user.password_exists_in_profile'],
  ] as const;
  for (const [added, held, code] of checks) {
    if (added && held) {
      throw new RequestError(code);
    }
  }
}

/**
 * The verified email or phone of record `verificationId`, as an addition to the profile: it fills a
 * gap of `account`, no other account holds it, and the settings allow the email.
 */
export async function addressFromRecord(
  db: Queryable,
  cache: SharedCache,
  settings: SignInExperience,
  state: ExperienceState,
  verificationId: string,
  account: UserRow | undefined,
): Promise<PendingProfile> {
  const addition = profileFromRecord(state, verificationId);
  assertNotInAccount(account, addition);
  await assertEmailForAccount(db, cache, settings, addition.primaryEmail);
  await assertIdentifiersFree(db, addition, state.userId);
  return addition;
}

/** 422 `user.missing_profile` when the sign-up settings require what the account and the profile both lack. */
export function assertProfileFulfilled(profile: PendingProfile, settings: SignInExperience, user: UserRow): void {
  const missing = missingProfile(profile, settings, user);
  if (missing.length > 0) {
    throw new RequestError('user.missing_profile', { data: { missingProfile: missing } });
  }
}

/** A registration's profile, once the account is made of it: only what is still to link remains. */
export const afterRegistration = (profile: PendingProfile): PendingProfile =>
  profile.socialVerificationId ? { socialVerificationId: profile.socialVerificationId } : {};

/**
 * Writes the profile into the account in the caller's transaction, checked again against the
 * locked row and every other user (an email free when it was added may have been taken since:
 * 422 `user.email_already_in_use`). A linked email joins its domain's JIT organizations. Says
 * whether the account changed.
 */
export async function applyProfile(
  trx: Knex.Transaction,
  cache: SharedCache,
  ctx: Context,
  state: ExperienceState,
  userId: string,
): Promise<boolean> {
  const { username, primaryEmail, primaryPhone, passwordDigest } = state.profile;
  const changes: UserChanges = {
    ...(username && { username }),
    ...(primaryEmail && { primaryEmail }),
    ...(primaryPhone && { primaryPhone }),
    ...(passwordDigest && { passwordDigest }),
  };
  if (Object.keys(changes).length === 0) {
    return false;
  }
  assertNotInAccount(await getUserRowForUpdate(trx, userId), state.profile);
  await changeUser(trx, userId, changes);
  if (primaryEmail) {
    await provisionByEmailDomain(trx, cache, ctx, userId, primaryEmail);
  }
  return true;
}
