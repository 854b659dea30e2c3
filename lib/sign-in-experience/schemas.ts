import { z } from 'zod';

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
