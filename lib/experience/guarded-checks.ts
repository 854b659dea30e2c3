import type { Knex } from 'knex';
import { z } from 'zod';

import { RequestError } from '../http/errors.ts';
import { email, phone } from '../users/schemas.ts';
import { assertNotLocked, failVerification, recordSuccess, sentinelTarget, type SentinelPolicy } from './sentinel.ts';
import { verifyVerificationCode, type CodeIdentifier } from './verification-codes.ts';

/** An email or phone a code is sent to, validated and normalised as users' are. */
export const codeIdentifierSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('email'), value: email }),
  z.strictObject({ type: z.literal('phone'), value: phone }),
]);

/**
 * Checks a code the way every end-user path must: refused while the identifier is locked, a wrong
 * code counted toward the lock, a right one ending the run of failures.
 */
export async function verifyCodeGuarded(
  db: Knex,
  policy: SentinelPolicy,
  check: { codeId: string; identifier: CodeIdentifier; code: string },
): Promise<void> {
  const target = sentinelTarget(check.identifier.type, check.identifier.value);
  await assertNotLocked(db, target);
  try {
    await verifyVerificationCode(db, check);
  } catch (error) {
    if (error instanceof RequestError && error.code.startsWith('verification_code.')) {
      return failVerification(db, target, policy, error);
    }
    throw error;
  }
  await recordSuccess(db, target);
}
