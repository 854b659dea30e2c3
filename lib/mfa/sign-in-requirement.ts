import { z } from 'zod';

import { RequestError } from '../http/errors.ts';
import type { MfaPolicy, SignInExperience } from '../sign-in-experience/schemas.ts';
import type { Queryable } from '../storage/database.ts';
import { type ChannelAddresses, codeFactorsOf, maskedIdentifiers } from './code-factors.ts';
import { hasUsableFactor } from './factors.ts';
import { type FactorRow, listFactors } from './queries.ts';
import { newPasskeySchema } from './webauthn.ts';

/** Second factors in this interaction: proven, declined, or newly enrolled (bound at submit). */
export const mfaProgressSchema = z.object({
  verified: z.boolean().optional(),
  skipped: z.boolean().optional(),
  /** A factor was bound here, or the user chose to set one up (Logto's `mfaEnabled`). */
  enabled: z.boolean().optional(),
  /** The suggestion of another factor was declined (Logto's `additionalBindingSuggestionSkipped`). */
  suggestionSkipped: z.boolean().optional(),
  totp: z.object({ secret: z.string(), step: z.number() }).optional(),
  backupCodes: z.array(z.string()).optional(),
  /** Passkeys registered in this interaction, bound at submit. */
  webAuthn: z.array(newPasskeySchema).optional(),
});
export type MfaProgress = z.output<typeof mfaProgressSchema>;

/** The factors this service implements, in the order they are offered (Logto's: passkey, TOTP, phone, email, backup codes). */
const implementedFactors = [
  'WebAuthn',
  'Totp',
  'PhoneVerificationCode',
  'EmailVerificationCode',
  'BackupCode',
] as const;
export type MfaFactor = (typeof implementedFactors)[number];

const nonSkippable = new Set<MfaPolicy>([
  'Mandatory',
  'PromptAtSignInAndSignUpMandatory',
  'PromptOnlyAtSignInMandatory',
]);
const promptOnlyAtSignIn = new Set<MfaPolicy>(['PromptOnlyAtSignIn', 'PromptOnlyAtSignInMandatory']);

/** Logto's skippable prompts: a user without a factor is asked once, and may decline for good. */
export const isSkippablePrompt = (policy: MfaPolicy): boolean =>
  policy === 'UserControlled' || policy === 'PromptAtSignInAndSignUp' || policy === 'PromptOnlyAtSignIn';

/** Whether a user may decline to set up a factor: any policy but the mandatory ones (NoPrompt too, as in Logto). */
export const mayDecline = (policy: MfaPolicy): boolean => !nonSkippable.has(policy);

/** The factors this service implements, of those the settings enable. */
export const enabledFactors = (settings: SignInExperience): MfaFactor[] =>
  implementedFactors.filter((type) => settings.mfa.factors.includes(type));

const inOrder = (factors: Set<string>): MfaFactor[] => implementedFactors.filter((type) => factors.has(type));

type MfaUser = {
  id: string;
  mfa_skipped: number | boolean;
  primary_email: string | null;
  primary_phone: string | null;
};

/**
 * The enabled factors the account has: enrolled ones that are usable, and a primary email or phone
 * while its code factor is enabled.
 */
export async function accountFactors(db: Queryable, settings: SignInExperience, user: MfaUser): Promise<MfaFactor[]> {
  const enabled = enabledFactors(settings);
  const stored: FactorRow[] = (await listFactors(db, user.id)).filter(
    (factor) => enabled.includes(factor.type) && hasUsableFactor([factor]),
  );
  const addresses = { primaryEmail: user.primary_email, primaryPhone: user.primary_phone };
  return inOrder(new Set([...stored.map((factor) => factor.type), ...codeFactorsOf(enabled, addresses)]));
}

/**
 * A sign-in by an account that has a factor proves it before anything else (403
 * `session.mfa.require_mfa_verification`, with where a code would go, masked). MFA is off while the
 * settings enable no factor besides backup codes.
 */
export async function verificationOwed(
  db: Queryable,
  settings: SignInExperience,
  user: MfaUser,
  progress: MfaProgress = {},
): Promise<RequestError | undefined> {
  if (progress.verified || !enabledFactors(settings).some((type) => type !== 'BackupCode')) {
    return undefined;
  }
  const usable = await accountFactors(db, settings, user);
  if (usable.length === 0) {
    return undefined;
  }
  const addresses = { primaryEmail: user.primary_email, primaryPhone: user.primary_phone };
  return new RequestError('session.mfa.require_mfa_verification', {
    data: { availableFactors: usable, maskedIdentifiers: maskedIdentifiers(usable, addresses) },
  });
}

/**
 * Logto's suggestion of a second factor besides an email, phone or passkey, which also sign in
 * (422 `session.mfa.suggest_additional_mfa`, skippable): only for an address the sign-up settings
 * asked for (one added as a factor is not suggested to), and not once the user declined it here.
 */
function additionalFactorSuggestion(
  settings: SignInExperience,
  primary: MfaFactor[],
  held: Set<string>,
  addresses: ChannelAddresses,
  progress: MfaProgress,
): RequestError | undefined {
  if (progress.suggestionSkipped || primary.every((factor) => held.has(factor))) {
    return undefined;
  }
  const { identifiers, secondaryIdentifiers = [] } = settings.signUp;
  const signsUpWith = (channel: 'email' | 'phone') =>
    identifiers.includes(channel) ||
    secondaryIdentifiers.some(({ identifier }) => identifier === channel || identifier === 'emailOrPhone');
  if (
    (held.has('EmailVerificationCode') && !signsUpWith('email')) ||
    (held.has('PhoneVerificationCode') && !signsUpWith('phone')) ||
    held.has('Totp') ||
    held.has('BackupCode') ||
    (held.has('WebAuthn') && !settings.passkeySignIn.enabled)
  ) {
    return undefined;
  }
  return new RequestError('session.mfa.suggest_additional_mfa', {
    data: {
      availableFactors: primary,
      maskedIdentifiers: maskedIdentifiers([...held], addresses),
      isWebAuthnUsedAsSignInPasskey: settings.passkeySignIn.enabled && held.has('WebAuthn'),
      skippable: true,
      suggestion: true,
    },
  });
}

/**
 * What a sign-in (or registration) still owes before it may finish, as the error to answer with, in
 * Logto's order:
 * - a sign-in by an account with a factor: prove it (`verificationOwed`);
 * - a skippable prompt (`UserControlled`, `PromptAtSignInAndSignUp`, `PromptOnlyAtSignIn`) and no
 *   factor, not declined, not chosen: suggest one (422 `user.suggest_mfa`, skippable);
 * - none, and the policy, or an organization of the user's (unless `organizationRequiredMfaPolicy`
 *   is `NoPrompt`), requires one, or the user chose to set one up: enrol one (422 `user.missing_mfa`);
 * - only an email, phone or passkey that also signs in: suggest another (`additionalFactorSuggestion`);
 * - binding a factor in this interaction while backup codes are enabled and none are held: take them
 *   (422 `session.mfa.backup_code_required`; a sign-in that proves a factor it has binds nothing).
 * Factors held include those set up in this interaction, and an email or phone added to the profile
 * in it (`pending`) while its code factor is enabled. The `PromptOnlyAtSignIn...` policies ask
 * nothing of a registration. An organization may ask every member for a second factor, whatever
 * the policy: the caller tells whether one of the user's does (organizations/ lie beside mfa/,
 * which may not read their tables), asked only when it matters.
 */
export async function mfaOwed(
  db: Queryable,
  settings: SignInExperience,
  event: 'SignIn' | 'Register',
  user: MfaUser,
  organizationRequiresMfa: () => Promise<boolean>,
  progress: MfaProgress = {},
  pending: ChannelAddresses = {},
): Promise<RequestError | undefined> {
  const enabled = enabledFactors(settings);
  const primary = enabled.filter((type) => type !== 'BackupCode');
  const { policy, organizationRequiredMfaPolicy } = settings.mfa;
  if (primary.length === 0 || (event === 'Register' && promptOnlyAtSignIn.has(policy))) {
    return undefined;
  }
  // A registration made the account in this interaction: there is nothing of it to prove yet.
  const unproven = event === 'SignIn' ? await verificationOwed(db, settings, user, progress) : undefined;
  if (unproven) {
    return unproven;
  }
  // What this interaction binds: an authenticator, a passkey, an email or phone added to the profile.
  const binding = [
    ...(progress.totp ? ['Totp'] : []),
    ...(progress.webAuthn?.length ? ['WebAuthn'] : []),
    ...codeFactorsOf(enabled, pending),
  ];
  const held = new Set<string>([...(await accountFactors(db, settings, user)), ...binding]);
  let byOrganization: boolean | undefined;
  const requiredByOrganization = async () =>
    (byOrganization ??= organizationRequiredMfaPolicy !== 'NoPrompt' && (await organizationRequiresMfa()));
  const skipped = Boolean(progress.skipped) || Boolean(user.mfa_skipped);
  if (isSkippablePrompt(policy) && !skipped && !progress.enabled && held.size === 0) {
    if (!(await requiredByOrganization())) {
      return new RequestError('user.suggest_mfa', { data: { availableFactors: primary, skippable: true } });
    }
  }
  const required = nonSkippable.has(policy) || (await requiredByOrganization());
  if (!required && (policy === 'NoPrompt' || skipped)) {
    return undefined;
  }
  if (!primary.some((factor) => held.has(factor))) {
    // Logto's data: `skippable` only where the prompt may be declined.
    return new RequestError('user.missing_mfa', {
      data: required ? { availableFactors: primary } : { availableFactors: primary, skippable: true },
    });
  }
  const addresses = {
    primaryEmail: pending.primaryEmail ?? user.primary_email,
    primaryPhone: pending.primaryPhone ?? user.primary_phone,
  };
  const suggestion = additionalFactorSuggestion(settings, primary, held, addresses, progress);
  if (suggestion) {
    return suggestion;
  }
  // Backup codes go with a factor bound now; an account proving one it has is not asked for them.
  if (enabled.includes('BackupCode') && binding.length > 0 && !held.has('BackupCode') && !progress.backupCodes) {
    return new RequestError('session.mfa.backup_code_required');
  }
  return undefined;
}
