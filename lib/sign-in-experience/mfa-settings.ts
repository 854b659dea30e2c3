import { RequestError } from '../http/errors.ts';
import type { MfaPolicy, SignInExperience } from './schemas.ts';

const adaptiveOnlyPolicies = new Set<MfaPolicy>(['PromptAtSignInAndSignUpMandatory', 'PromptOnlyAtSignInMandatory']);

const channels = [
  {
    identifier: 'email',
    factor: 'EmailVerificationCode',
    forMfa: 'sign_in_experiences.email_verification_code_cannot_be_used_for_mfa',
    forSignIn: 'sign_in_experiences.email_verification_code_cannot_be_used_for_sign_in',
  },
  {
    identifier: 'phone',
    factor: 'PhoneVerificationCode',
    forMfa: 'sign_in_experiences.phone_verification_code_cannot_be_used_for_mfa',
    forSignIn: 'sign_in_experiences.phone_verification_code_cannot_be_used_for_sign_in',
  },
] as const;

/**
 * Checks the MFA settings an update leads to (`next`), given what the update sets (`change`):
 * - adaptive MFA is not offered: `adaptiveMfa.enabled: true` is refused (422);
 * - the two non-skippable prompt policies go with adaptive MFA only (422, as Logto with it off);
 * - a code cannot be both a way to sign in and the second factor of the same channel, or the
 *   "second" factor would be the first one again (Logto's rule, 400): the code names the side the
 *   update changed, the MFA factors when it sets them, else the sign-in methods.
 */
export function assertMfaSettings(
  next: SignInExperience,
  change: { mfa?: unknown; signIn?: unknown; adaptiveMfa?: unknown },
): void {
  if (change.adaptiveMfa && next.adaptiveMfa.enabled) {
    throw new RequestError('sign_in_experiences.adaptive_mfa_not_offered');
  }
  // Only what the update sets is judged: settings stored before these rules do not block other changes.
  if (!change.mfa && !change.signIn) {
    return;
  }
  // Logto's non-skippable prompts are adaptive MFA's, which this service does not have (Logto, adaptive MFA off: the same 422).
  if (change.mfa && next.mfa.factors.length > 0 && adaptiveOnlyPolicies.has(next.mfa.policy)) {
    throw new RequestError('sign_in_experiences.non_adaptive_mfa_requires_skippable_policy');
  }
  for (const { identifier, factor, forMfa, forSignIn } of channels) {
    const codeSignIn = next.signIn.methods.some(
      (method) => method.identifier === identifier && method.verificationCode,
    );
    if (codeSignIn && next.mfa.factors.includes(factor)) {
      throw new RequestError(change.mfa ? forMfa : forSignIn);
    }
  }
}
