import type { Knex } from 'knex';
import { z } from 'zod';

import type { Queryable } from '../storage/database.ts';
import { bumpCacheVersion, lockCache, type SharedCache } from '../storage/shared-cache.ts';
import { defaultPasswordPolicy, passwordPolicySchema } from './password-policy.ts';

const identifier = z.enum(['username', 'email', 'phone']);

/** The sign-in experience settings we honour, in Logto's shapes. */
export const signInExperienceSchema = z.object({
  signInMode: z.enum(['SignIn', 'Register', 'SignInAndRegister']),
  signUp: z.strictObject({
    identifiers: z.array(identifier).max(3),
    password: z.boolean(),
    verify: z.boolean(),
  }),
  signIn: z.strictObject({
    methods: z
      .array(
        z.strictObject({
          identifier,
          password: z.boolean(),
          verificationCode: z.boolean(),
          isPasswordPrimary: z.boolean(),
        }),
      )
      .max(3),
  }),
  forgotPasswordMethods: z
    .array(z.enum(['EmailVerificationCode', 'PhoneVerificationCode']))
    .max(10)
    .nullable(),
  passwordPolicy: passwordPolicySchema,
  sentinelPolicy: z.strictObject({
    maxAttempts: z.number().int().min(1).max(1000),
    lockoutDuration: z.number().int().min(1).max(10_080),
  }),
  mfa: z.strictObject({
    factors: z
      .array(z.enum(['Totp', 'WebAuthn', 'BackupCode', 'EmailVerificationCode', 'PhoneVerificationCode']))
      .max(10),
    policy: z.enum(['UserControlled', 'Mandatory', 'NoPrompt']),
  }),
  termsOfUseUrl: z.url().max(2048).nullable(),
  privacyPolicyUrl: z.url().max(2048).nullable(),
  supportEmail: z.email().max(128).nullable(),
});

export type SignInExperience = z.output<typeof signInExperienceSchema>;

/** A fresh install: sign up with username + password; sign in by username or email; reset by email code. */
export const defaultSignInExperience: SignInExperience = {
  signInMode: 'SignInAndRegister',
  signUp: { identifiers: ['username'], password: true, verify: false },
  signIn: {
    methods: [
      { identifier: 'username', password: true, verificationCode: false, isPasswordPrimary: true },
      { identifier: 'email', password: true, verificationCode: true, isPasswordPrimary: true },
    ],
  },
  forgotPasswordMethods: ['EmailVerificationCode'],
  passwordPolicy: defaultPasswordPolicy,
  sentinelPolicy: { maxAttempts: 10, lockoutDuration: 60 },
  mfa: { factors: [], policy: 'UserControlled' },
  termsOfUseUrl: null,
  privacyPolicyUrl: null,
  supportEmail: null,
};

const id = 'default';

export async function readSignInExperience(db: Queryable): Promise<SignInExperience> {
  const row = await db('sign_in_experience').where({ id }).first<{ settings: string } | undefined>();
  // Settings saved by an older version may lack newer fields: defaults fill them.
  return row
    ? { ...defaultSignInExperience, ...(JSON.parse(row.settings) as Partial<SignInExperience>) }
    : defaultSignInExperience;
}

export const currentSignInExperience = (db: Queryable, cache: SharedCache) =>
  cache.get('settings', id, () => readSignInExperience(db));

/**
 * The settings as stored (not from memory), locked until the transaction ends: read so before
 * changing them. The row may not exist yet, so the lock is the settings' cache version row.
 */
export async function signInExperienceForUpdate(trx: Knex.Transaction): Promise<SignInExperience> {
  await lockCache(trx, 'settings');
  return readSignInExperience(trx);
}

export async function saveSignInExperience(db: Queryable, settings: SignInExperience): Promise<void> {
  await db('sign_in_experience')
    .insert({ id, settings: JSON.stringify(settings) })
    .onConflict('id')
    .merge();
  await bumpCacheVersion(db, 'settings');
}
