import type { Knex } from 'knex';
import { z } from 'zod';

import { RequestError } from '../http/errors.ts';
import type { CodeIdentifier, CodePurpose } from '../messages/codes.ts';
import type { Connectors, MessageAbout } from '../messages/index.ts';
import type { SharedCache } from '../storage/shared-cache.ts';
import { findUserByIdentifier } from '../users/queries.ts';
import { email, phone } from '../users/schemas.ts';
import { recordExceptionEvent } from './events.ts';
import {
  assertNotLocked,
  failVerification,
  recordSuccess,
  type SentinelPolicy,
  sentinelTarget,
} from './lockout/lockout.ts';
import { MessageRateLimited } from './verification/send-rate-limit.ts';
import { sendVerificationCode, verifyVerificationCode } from './verification/verification-codes.ts';

/** An email or phone a code is sent to, validated and normalised as users' are. */
export const codeIdentifierSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('email'), value: email }),
  z.strictObject({ type: z.literal('phone'), value: phone }),
]);

/** A refusal of the code itself (wrong, expired, used up): it counts toward a lock. */
export const isCodeRefusal = (error: unknown): error is RequestError =>
  error instanceof RequestError && error.code.startsWith('verification_code.');

/**
 * Checks a code the way every end-user path must: refused while the account the address belongs to
 * (or the address, if it is no one's) is locked, a wrong code counted toward the lock, a right one
 * ending the run of failures.
 */
export async function verifyCodeGuarded(
  db: Knex,
  cache: SharedCache,
  policy: SentinelPolicy,
  check: { codeId: string; identifier: CodeIdentifier; code: string },
): Promise<void> {
  const { type, value } = check.identifier;
  const target = sentinelTarget(check.identifier, await findUserByIdentifier(db, type, value));
  await assertNotLocked(db, target);
  try {
    await verifyVerificationCode(db, check);
  } catch (error) {
    if (isCodeRefusal(error)) {
      return failVerification(db, target, policy, error, () =>
        recordExceptionEvent(db, cache, 'Identifier.Lockout', { type, value }),
      );
    }
    throw error;
  }
  await recordSuccess(db, target);
}

/**
 * Sends a code on an end user's request: over the recipient's limit, the refusal is also a
 * `Message.RateLimited` event (management sends are limited the same way but emit nothing).
 */
export async function sendEndUserCode(
  db: Knex,
  cache: SharedCache,
  connectors: Connectors,
  identifier: CodeIdentifier,
  purpose: CodePurpose,
  about?: MessageAbout,
  deliver = true,
) {
  try {
    return await sendVerificationCode(db, connectors, { identifier, purpose, about, deliver });
  } catch (error) {
    if (error instanceof MessageRateLimited) {
      await recordExceptionEvent(db, cache, 'Message.RateLimited', {
        action: 'VerificationCodeSend',
        recipient: error.recipient,
      });
    }
    throw error;
  }
}
