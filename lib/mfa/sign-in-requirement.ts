import { z } from 'zod';

import type { MfaPolicy, SignInExperience } from '../sign-in-experience/schemas.ts';
import { RequestError } from '../http/errors.ts';
import type { Queryable } from '../storage/database.ts';
import { codeFactorsOf, maskedIdentifiers, type ChannelAddresses } from './code-factors.ts';
import { hasUsableFactor } from './factors.ts';
import { listFactors, type FactorRow } from './queries.ts';
import { newPasskeySchema } from './webauthn.ts';

/** Second factors in this interaction: proven, declined, or newly enrolled (bound at submit). */
export const mfaProgressSchema = z.object({
  verified: z.boolean().optional(),
  skipped: z.boolean().optional(),
  totp: z.object({ secret: z.string(), step: z.number() }).optional(),
  backupCodes: z.array(z.string()).optional(),
  /** Passkeys registered in this interaction, bound at submit. */
  webAuthn: z.array(newPasskeySchema).optional(),
});
export type MfaProgress = z.output<typeof mfaProgressSchema>;

/** The factors this service implements, in the order they are offered (Logto's: TOTP, passkey, phone, email, backup codes). */
const implementedFactors = [
  'Totp',
  'WebAuthn',
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

/** The factors this service implements, of those the settings enable. */
export const enabledFactors = (settings: SignInExperience): MfaFactor[] =>
  implementedFactors.filter((type) => settings.mfa.factors.includes(type));

const inOrder = (factors: Set<string>): MfaFactor[] => implementedFactors.filter((type) => factors.has(type));

/**
 * What a sign-in (or registration) still owes before it may finish, as the error to answer with:
 * - the user has a factor: prove it (403 `session.mfa.require_mfa_verification`, with where a code
 *   would go, masked). A primary email or phone is a factor while its code factor is enabled;
 * - none, and the policy (or an organization of the user's, unless `organizationRequiredMfaPolicy` is
 *   `NoPrompt`) requires one: enrol one (422 `user.missing_mfa`);
 * - none, and the policy prompts (`UserControlled`, `PromptAtSignInAndSignUp`, `PromptOnlyAtSignIn`):
 *   enrol one or decline (422 `user.missing_mfa`, `skippable`);
 * - the `PromptOnlyAtSignIn...` policies ask nothing of a registration;
 * - enrolling a factor while backup codes are enabled: take codes too (422 `session.mfa.backup_code_required`).
 *   An authenticator or passkey set up in this interaction, or an email or phone added to the profile in it
 *   (`pending`) while its code factor is enabled, is such an enrolment.
 * MFA is off when the settings enable no factor besides backup codes. An organization may ask
 * every member for a second factor, whatever the policy: the caller tells whether one of the user's
 * does (organizations/ lie beside mfa/, which may not read their tables), asked only when MFA is on.
 */
export async function mfaOwed(
  db: Queryable,
  settings: SignInExperience,
  event: 'SignIn' | 'Register',
  user: { id: string; mfa_skipped: number | boolean; primary_email: string | null; primary_phone: string | null },
  organizationRequiresMfa: () => Promise<boolean>,
  progress: MfaProgress = {},
  pending: ChannelAddresses = {},
): Promise<RequestError | undefined> {
  const enabled = enabledFactors(settings);
  const primary = enabled.filter((type) => type !== 'BackupCode');
  if (primary.length === 0) {
    return undefined;
  }
  const addresses = { primaryEmail: user.primary_email, primaryPhone: user.primary_phone };
  const stored: FactorRow[] = (await listFactors(db, user.id)).filter(
    (factor) => enabled.includes(factor.type) && hasUsableFactor([factor]),
  );
  const usable = inOrder(new Set([...stored.map((factor) => factor.type), ...codeFactorsOf(enabled, addresses)]));
  if (usable.length > 0) {
    if (progress.verified) {
      return undefined;
    }
    return new RequestError('session.mfa.require_mfa_verification', {
      data: { availableFactors: usable, maskedIdentifiers: maskedIdentifiers(usable, addresses) },
    });
  }
  if (progress.totp || progress.webAuthn?.length || codeFactorsOf(enabled, pending).length > 0) {
    if (enabled.includes('BackupCode') && !progress.backupCodes) {
      return new RequestError('session.mfa.backup_code_required');
    }
    return undefined;
  }
  const { policy, organizationRequiredMfaPolicy } = settings.mfa;
  // The `PromptOnlyAtSignIn...` policies leave a registration alone: the prompt waits for a sign-in.
  const promptsNow = event === 'SignIn' || !promptOnlyAtSignIn.has(policy);
  const required =
    (promptsNow && nonSkippable.has(policy)) ||
    (organizationRequiredMfaPolicy !== 'NoPrompt' && (await organizationRequiresMfa()));
  const offered = promptsNow && isSkippablePrompt(policy) && !progress.skipped && !user.mfa_skipped;
  if (!required && !offered) {
    return undefined;
  }
  return new RequestError('user.missing_mfa', {
    data: { availableFactors: primary, skippable: !required },
  });
}
