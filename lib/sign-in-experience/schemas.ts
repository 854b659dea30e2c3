import { z } from 'zod';

import { customUiAssetsSchema, customUiCspSchema } from './custom-ui.ts';
import { emailBlocklistPolicySchema } from './email-blocklist.ts';
import { passwordExpirationSchema } from './password-expiration.ts';
import { defaultPasswordPolicy, passwordPolicySchema } from './password-policy.ts';
import { defaultUsernamePolicy, usernamePolicySchema } from './username-policy.ts';

const identifier = z.enum(['username', 'email', 'phone']);

/**
 * Logto's MFA prompt policies. `UserControlled` is Logto's old name of `PromptAtSignInAndSignUp`;
 * the `...Mandatory` two are the non-skippable prompts adaptive MFA pairs with.
 */
export const mfaPolicies = [
  'UserControlled',
  'PromptAtSignInAndSignUp',
  'PromptOnlyAtSignIn',
  'Mandatory',
  'NoPrompt',
  'PromptAtSignInAndSignUpMandatory',
  'PromptOnlyAtSignInMandatory',
] as const;
export type MfaPolicy = (typeof mfaPolicies)[number];

/**
 * A link the pages show (terms, privacy, support site), which Logto lets an operator clear with `''`
 * as well as `null`. Only http(s): a `javascript:` or `data:` link would run in the pages' origin
 * when a person follows it.
 */
const clearableUrl = z
  .union([z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).max(2048), z.literal('')])
  .nullable()
  .transform((value) => value || null);

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
    /** Identifiers an account must also have at sign-up (Logto's; `emailOrPhone`: either). */
    secondaryIdentifiers: z
      .array(
        z.strictObject({ identifier: z.enum([...identifier.options, 'emailOrPhone']), verify: z.boolean().optional() }),
      )
      .max(4)
      .optional(),
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
  usernamePolicy: usernamePolicySchema,
  passwordExpiration: passwordExpirationSchema,
  /** Which email addresses may be an account's (at sign-up, and when one is added later). */
  emailBlocklistPolicy: emailBlocklistPolicySchema,
  sentinelPolicy: z.strictObject({
    maxAttempts: z.number().int().min(1).max(1000),
    lockoutDuration: z.number().int().min(1).max(10_080),
  }),
  mfa: z.strictObject({
    factors: z
      .array(z.enum(['Totp', 'WebAuthn', 'BackupCode', 'EmailVerificationCode', 'PhoneVerificationCode']))
      .max(10),
    policy: z.enum(mfaPolicies),
    /**
     * Whether members of an organization that requires MFA must set it up at sign-in. Logto treats
     * an absent value as `NoPrompt`; we as `Mandatory` (docs/decisions.md, "Multi-factor authentication
     * and passkeys").
     */
    organizationRequiredMfaPolicy: z.enum(['NoPrompt', 'Mandatory']).optional(),
  }),
  /**
   * Logto's adaptive MFA (a second factor asked only on risk signals): not offered here, so only
   * `enabled: false` is taken (mfa-settings.ts), which Logto's own set-ups send.
   */
  adaptiveMfa: z.strictObject({ enabled: z.boolean() }),
  /**
   * Logto's `captchaPolicy`: on, sign-up, sign-in and password reset need a token the captcha
   * provider (`/api/captcha-provider`) accepts, or a proof that vouches for the person instead
   * (lib/experience/captcha.ts).
   */
  captchaPolicy: z.strictObject({ enabled: z.boolean().optional() }),
  /** Whether enterprise SSO (by email domain) is offered and enforced at sign-in. */
  singleSignOnEnabled: z.boolean(),
  termsOfUseUrl: clearableUrl,
  privacyPolicyUrl: clearableUrl,
  supportEmail: z
    .union([z.email().max(128), z.literal('')])
    .nullable()
    .transform((value) => value || null),
  /** Where the hosted pages send a user who needs help. */
  supportWebsiteUrl: clearableUrl,
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
  /** Logto's custom UI, not hosted here: always empty (custom-ui.ts). */
  customUiAssets: customUiAssetsSchema,
  customUiCsp: customUiCspSchema,
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
  usernamePolicy: defaultUsernamePolicy,
  passwordExpiration: {},
  sentinelPolicy: { maxAttempts: 10, lockoutDuration: 60 },
  mfa: { factors: [], policy: 'UserControlled' },
  adaptiveMfa: { enabled: false },
  captchaPolicy: {},
  termsOfUseUrl: null,
  privacyPolicyUrl: null,
  supportEmail: null,
  supportWebsiteUrl: null,
  singleSignOnEnabled: true,
  emailBlocklistPolicy: {},
  color: { primaryColor: '#1d4ed8', isDarkModeEnabled: false, darkPrimaryColor: '#93b4ff' },
  branding: {},
  passkeySignIn: { enabled: false, showPasskeyButton: true, allowAutofill: true },
  customCss: null,
  customUiAssets: null,
  customUiCsp: {},
  languageInfo: { autoDetect: true, fallbackLanguage: 'en' },
};
