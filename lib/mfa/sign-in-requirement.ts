import { z } from 'zod';

import type { SignInExperience } from '../sign-in-experience/schemas.ts';
import { RequestError } from '../http/errors.ts';
import type { Queryable } from '../storage/database.ts';
import { hasUsableFactor } from './factors.ts';
import { listFactors, type FactorRow, type FactorType } from './queries.ts';

/** Second factors in this interaction: proven, declined, or newly enrolled (bound at submit). */
export const mfaProgressSchema = z.object({
  verified: z.boolean().optional(),
  skipped: z.boolean().optional(),
  totp: z.object({ secret: z.string(), step: z.number() }).optional(),
  backupCodes: z.array(z.string()).optional(),
});
export type MfaProgress = z.output<typeof mfaProgressSchema>;

/** The factors this service implements, of those the settings enable. */
export const enabledFactors = (settings: SignInExperience): FactorType[] =>
  (['Totp', 'BackupCode'] as const).filter((type) => settings.mfa.factors.includes(type));

/**
 * What a sign-in (or registration) still owes before it may finish, as the error to answer with:
 * - the user has a factor: prove it (403 `session.mfa.require_mfa_verification`);
 * - none, and the policy (or an organization of the user's) requires one: enrol one (422 `user.missing_mfa`);
 * - none, and the policy is UserControlled: enrol one or decline (422 `user.missing_mfa`, `skippable`);
 * - enrolling an authenticator while backup codes are enabled: take codes too (422 `session.mfa.backup_code_required`).
 * MFA is off when the settings enable no factor besides backup codes. An organization may ask
 * every member for a second factor, whatever the policy: the caller tells whether one of the user's
 * does (organizations/ lie beside mfa/, which may not read their tables), asked only when MFA is on.
 */
export async function mfaOwed(
  db: Queryable,
  settings: SignInExperience,
  user: { id: string; mfa_skipped: number | boolean },
  organizationRequiresMfa: () => Promise<boolean>,
  progress: MfaProgress = {},
): Promise<RequestError | undefined> {
  const enabled = enabledFactors(settings);
  const primary = enabled.filter((type) => type !== 'BackupCode');
  if (primary.length === 0) {
    return undefined;
  }
  const bound: FactorRow[] = (await listFactors(db, user.id)).filter((factor) => enabled.includes(factor.type));
  if (hasUsableFactor(bound)) {
    if (progress.verified) {
      return undefined;
    }
    return new RequestError('session.mfa.require_mfa_verification', {
      data: { availableFactors: [...new Set(bound.map((factor) => factor.type))] },
    });
  }
  if (progress.totp) {
    if (enabled.includes('BackupCode') && !progress.backupCodes) {
      return new RequestError('session.mfa.backup_code_required');
    }
    return undefined;
  }
  const required = settings.mfa.policy === 'Mandatory' || (await organizationRequiresMfa());
  const offered = settings.mfa.policy === 'UserControlled' && !progress.skipped && !user.mfa_skipped;
  if (!required && !offered) {
    return undefined;
  }
  return new RequestError('user.missing_mfa', {
    data: { availableFactors: primary, skippable: !required },
  });
}
