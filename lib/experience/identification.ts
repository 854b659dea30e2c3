import type { Knex } from 'knex';

import { RequestError } from '../http/errors.ts';
import { assertEmailAllowed } from '../sign-in-experience/email-blocklist.ts';
import type { SignInExperience } from '../sign-in-experience/schemas.ts';
import { ssoConnectorsForEmail } from '../sso/queries.ts';
import type { Queryable } from '../storage/database.ts';
import type { SharedCache } from '../storage/shared-cache.ts';
import { findUserByIdentifier, findUserRow, identitiesOf, type UserRow } from '../users/queries.ts';
import { createUser } from '../users/users.ts';
import { getRecord, requireVerified } from './state.ts';
import type { ExperienceState, PendingProfile } from './state-queries.ts';

function assertActive(user: UserRow): UserRow {
  if (user.is_suspended) {
    throw new RequestError('user.suspended');
  }
  return user;
}

/**
 * An email in an SSO connector's domains belongs to the organization's IdP: no password or code
 * account around it, while single sign-on is on (`singleSignOnEnabled`).
 */
async function assertNotSsoEmail(
  db: Queryable,
  cache: SharedCache,
  settings: SignInExperience,
  email: string | undefined,
): Promise<void> {
  if (email && settings.singleSignOnEnabled && (await ssoConnectorsForEmail(db, cache, email)).length > 0) {
    throw new RequestError('session.sso_enabled');
  }
}

/** An email a new or existing account is to hold: not an SSO domain's, and allowed by the blocklist policy. */
export async function assertEmailForAccount(
  db: Queryable,
  cache: SharedCache,
  settings: SignInExperience,
  email: string | undefined,
): Promise<void> {
  await assertNotSsoEmail(db, cache, settings, email);
  if (email) {
    assertEmailAllowed(settings.emailBlocklistPolicy, email);
  }
}

/**
 * SignIn and ForgotPassword: the user a verified record proves, if the settings allow that way in
 * (a sign-in method for the identifier; a reset method for the code's channel).
 */
export async function identifyUser(
  db: Knex,
  cache: SharedCache,
  state: ExperienceState,
  verificationId: string | undefined,
  settings: SignInExperience,
): Promise<string> {
  const record = requireVerified(getRecord(state, verificationId));
  if ('identifier' in record && record.identifier.type === 'email') {
    await assertNotSsoEmail(db, cache, settings, record.identifier.value);
  }
  if (record.type === 'Password') {
    if (state.interactionEvent === 'ForgotPassword') {
      throw new RequestError('session.not_supported_for_forgot_password');
    }
    return record.userId;
  }
  if (record.type === 'SignInPasskey') {
    const user =
      state.interactionEvent === 'SignIn' && record.userId ? await findUserRow(db, record.userId) : undefined;
    if (!user) {
      throw new RequestError('session.invalid_interaction_type', { reason: 'A passkey only signs in.' });
    }
    return assertActive(user).id;
  }
  if (record.type === 'OneTimeToken') {
    // A link made for this email: it proves the address whatever the sign-in methods (Logto's rule).
    const user = await findUserByIdentifier(db, 'email', record.identifier.value);
    if (!user) {
      throw new RequestError('user.user_not_exist', { identifier: record.identifier.value });
    }
    return assertActive(user).id;
  }
  if (record.type !== 'EmailVerificationCode' && record.type !== 'PhoneVerificationCode') {
    throw new RequestError('session.invalid_interaction_type', {
      reason: 'This verification cannot identify a user here.',
    });
  }
  if (state.interactionEvent === 'ForgotPassword') {
    const method = record.type === 'EmailVerificationCode' ? 'EmailVerificationCode' : 'PhoneVerificationCode';
    if (!settings.forgotPasswordMethods?.includes(method)) {
      throw new RequestError('session.not_supported_for_forgot_password');
    }
  } else if (
    !settings.signIn.methods.some((method) => method.identifier === record.identifier.type && method.verificationCode)
  ) {
    throw new RequestError('user.sign_in_method_not_enabled');
  }
  const user = await findUserByIdentifier(db, record.identifier.type, record.identifier.value);
  if (!user) {
    throw new RequestError('user.user_not_exist', { identifier: record.identifier.value });
  }
  return assertActive(user).id;
}

/** Folds a verified record into the profile being registered. */
export function profileFromRecord(state: ExperienceState, verificationId: string): PendingProfile {
  const record = requireVerified(getRecord(state, verificationId));
  switch (record.type) {
    case 'NewPasswordIdentity':
      return { username: record.identifier.value, passwordDigest: record.passwordDigest };
    case 'EmailVerificationCode':
    case 'OneTimeToken':
      return { primaryEmail: record.identifier.value };
    case 'PhoneVerificationCode':
      return { primaryPhone: record.identifier.value };
    default:
      throw new RequestError('session.invalid_interaction_type', {
        reason: 'A password verification cannot register an account.',
      });
  }
}

/**
 * What the sign-up settings require that the account would lack (Logto's `missingProfile`): the
 * profile being built, over what `user` (signing in) already has. A social identity stands in for
 * a password, as in Logto. Secondary identifiers follow the primary one and the password, in their order.
 */
export function missingProfile(profile: PendingProfile, settings: SignInExperience, user?: UserRow): string[] {
  const missing: string[] = [];
  const has = {
    username: profile.username ?? user?.username,
    email: profile.primaryEmail ?? user?.primary_email,
    phone: profile.primaryPhone ?? user?.primary_phone,
  };
  const identifiers = settings.signUp.identifiers;
  if (identifiers.length > 0 && !identifiers.some((identifier) => has[identifier])) {
    missing.push(identifiers.length === 1 ? identifiers[0] : identifiers.join('Or'));
  }
  const hasPassword =
    Boolean(profile.passwordDigest ?? user?.password_digest) ||
    (user !== undefined && Object.keys(identitiesOf(user.identities)).length > 0);
  if (settings.signUp.password && !hasPassword) {
    missing.push('password');
  }
  for (const { identifier } of settings.signUp.secondaryIdentifiers ?? []) {
    const held = identifier === 'emailOrPhone' ? has.email || has.phone : has[identifier];
    if (!held && !missing.includes(identifier)) {
      missing.push(identifier);
    }
  }
  return missing;
}

/** Register: creates the account from the profile; the caller's transaction also carries its events. */
export async function registerUser(
  trx: Queryable,
  profile: PendingProfile,
  settings: SignInExperience,
): Promise<string> {
  const missing = missingProfile(profile, settings);
  if (missing.length > 0) {
    throw new RequestError('user.missing_profile', {
      data: { missingProfile: missing },
    });
  }
  const user = await createUser(
    trx,
    { username: profile.username, primaryEmail: profile.primaryEmail, primaryPhone: profile.primaryPhone },
    profile.passwordDigest ? { digest: profile.passwordDigest } : undefined,
  );
  return user.id;
}
