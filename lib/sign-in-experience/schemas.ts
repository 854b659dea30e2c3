import { z } from 'zod';

import { defaultPasswordPolicy, passwordPolicySchema } from './password-policy.ts';

const identifier = z.enum(['username', 'email', 'phone']);

/** A colour as `#rrggbb`: only such a value reaches the pages' stylesheet (branding-css.ts). */
const hexColor = z
  .string()
  .max(7)
  .regex(/^#[0-9a-fA-F]{6}$/, 'a colour as #rrggbb');
const imageUrl = z.url({ protocol: /^https?$/ }).max(2048);

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
  /** Logto's `color`: the pages' primary colour, and the one for dark mode when it is on. */
  color: z.strictObject({ primaryColor: hexColor, isDarkModeEnabled: z.boolean(), darkPrimaryColor: hexColor }),
  /** Logto's `branding`: the logo above every hosted page (the dark one in dark mode), and the favicon. */
  branding: z.strictObject({
    logoUrl: imageUrl.optional(),
    darkLogoUrl: imageUrl.optional(),
    favicon: imageUrl.optional(),
    darkFavicon: imageUrl.optional(),
  }),
  /**
   * Logto's `passkeySignIn`: passkeys as a sign-in method of their own (no password first). The
   * button and the browser's autofill of the identifier field are the two ways the page offers it.
   */
  passkeySignIn: z.strictObject({
    enabled: z.boolean(),
    showPasskeyButton: z.boolean(),
    allowAutofill: z.boolean(),
  }),
  /** Operator CSS appended to the hosted pages' stylesheet (served as text/css, never inside HTML). */
  customCss: z.string().max(20_000).nullable(),
  /**
   * Logto's `languageInfo`: with `autoDetect`, the browser's languages (Accept-Language) choose the
   * pages' language; `fallbackLanguage` where they (and the application's `ui_locales`) name none we have.
   */
  languageInfo: z.strictObject({
    autoDetect: z.boolean(),
    fallbackLanguage: z
      .string()
      .max(16)
      .regex(/^[a-zA-Z]{2,8}(-[a-zA-Z0-9]{1,8})*$/, 'a language tag, such as en, fr or pt-BR'),
  }),
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
  color: { primaryColor: '#1d4ed8', isDarkModeEnabled: false, darkPrimaryColor: '#93b4ff' },
  branding: {},
  passkeySignIn: { enabled: false, showPasskeyButton: true, allowAutofill: true },
  customCss: null,
  languageInfo: { autoDetect: true, fallbackLanguage: 'en' },
};
