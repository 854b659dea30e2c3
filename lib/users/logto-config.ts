import { z } from 'zod';

import type { UserChanges, UserRow } from './queries.ts';

/** Logto's `logtoConfig` of a user, the part its APIs show: what the person chose to skip. */
export const logtoConfigSchema = z.object({
  mfa: z.object({ skipped: z.boolean(), skipMfaOnSignIn: z.boolean() }),
  passkeySignIn: z.object({ skipped: z.boolean() }),
});

export const logtoConfigOf = (row: UserRow): z.output<typeof logtoConfigSchema> => ({
  mfa: { skipped: Boolean(row.mfa_skipped), skipMfaOnSignIn: Boolean(row.mfa_skipped_on_sign_in) },
  passkeySignIn: { skipped: Boolean(row.passkey_sign_in_skipped) },
});

/** A change of what the person skipped: fields left out are kept. */
export const logtoConfigBody = z.strictObject({
  mfa: z.strictObject({ skipped: z.boolean().optional(), skipMfaOnSignIn: z.boolean().optional() }).optional(),
  passkeySignIn: z.strictObject({ skipped: z.boolean().optional() }).optional(),
});

export const logtoConfigChanges = (body: z.output<typeof logtoConfigBody>): UserChanges => ({
  mfaSkipped: body.mfa?.skipped,
  mfaSkippedOnSignIn: body.mfa?.skipMfaOnSignIn,
  passkeySignInSkipped: body.passkeySignIn?.skipped,
});
