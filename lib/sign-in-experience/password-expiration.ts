import { z } from 'zod';

import { RequestError } from '../http/errors.ts';

const day = 24 * 60 * 60 * 1000;

/**
 * Logto's `passwordExpiration`: on, a password older than `validPeriodDays` no longer signs in
 * (422 `password.expired`) until its owner sets a new one through a password reset. `enabledAt`,
 * set when it is turned on, is where a password set before the policy starts to age.
 */
export const passwordExpirationSchema = z.union([
  z.strictObject({ enabled: z.literal(false).optional() }),
  z.strictObject({
    enabled: z.literal(true),
    validPeriodDays: z.number().int().min(1).max(36_500),
    enabledAt: z.number().int().nonnegative().optional(),
  }),
]);
export type PasswordExpiration = z.output<typeof passwordExpirationSchema>;

/** The policy as it is stored: turned on now, unless it was on already (its start is kept). */
export function startedPasswordExpiration(next: PasswordExpiration, current: PasswordExpiration): PasswordExpiration {
  if (!next.enabled) {
    return next;
  }
  const enabledAt = next.enabledAt ?? (current.enabled ? current.enabledAt : undefined) ?? Date.now();
  return { ...next, enabledAt };
}

/** Turning it on needs a way to set a new password: at least one forgot-password method. */
export function assertPasswordExpirationReachable(
  policy: PasswordExpiration,
  forgotPasswordMethods: readonly string[] | null,
): void {
  if (policy.enabled && !forgotPasswordMethods?.length) {
    throw new RequestError('sign_in_experiences.password_expiration_requires_forgot_password');
  }
}

/** Whether a password set at `updatedAt` (null: before the policy) has expired under `policy`. */
export function isPasswordExpired(policy: PasswordExpiration, updatedAt: number | null, now = Date.now()): boolean {
  if (!policy.enabled) {
    return false;
  }
  const since = updatedAt ?? policy.enabledAt ?? now;
  return now - since > policy.validPeriodDays * day;
}
