import type { Knex } from 'knex';

import { RequestError } from '../../http/errors.ts';
import { lockouts, verificationFailures } from '../../metrics/metrics.ts';
import type { SignInExperience } from '../../sign-in-experience/schemas.ts';
import type { Queryable } from '../../storage/database.ts';
import { withTransaction } from '../../storage/transaction.ts';
import { countFailure, deleteUnlockedTarget, findSentinelRow, lockTarget } from './lockout-queries.ts';

export type SentinelPolicy = SignInExperience['sentinelPolicy'];

/**
 * What a failure is counted against: the account an identifier names (`user:<id>`), whichever of its
 * identifiers was typed, so that spelling an account two ways does not double its attempts; an
 * identifier that names no account counts on its own (`email:alice@example.com`), so that probing
 * unknown accounts is limited too.
 */
export type SentinelTarget = string;

export const accountTarget = (userId: string): SentinelTarget => `user:${userId}`;

/**
 * Second-factor failures count against the user, apart from their identifiers' password failures:
 * guessing codes locks the second factor, not the password sign-in, and the other way round.
 */
export const mfaTarget = (userId: string): SentinelTarget => `mfa:${userId}`;

export const identifierTarget = (type: string, value: string): SentinelTarget =>
  `${type}:${type === 'phone' ? value.replace(/^\+/, '') : value.trim().toLowerCase()}`;

export const sentinelTarget = (
  identifier: { type: string; value: string },
  user: { id: string } | undefined,
): SentinelTarget => (user ? accountTarget(user.id) : identifierTarget(identifier.type, identifier.value));

/** Refuses any verification against a locked target, even a correct one. */
export async function assertNotLocked(db: Queryable, target: SentinelTarget): Promise<void> {
  const row = await findSentinelRow(db, target);
  if (row?.locked_until && row.locked_until > Date.now()) {
    throw new RequestError('session.verification_blocked_too_many_attempts');
  }
}

/**
 * Counts one failed verification. The failure that reaches `maxAttempts` consecutive failures locks
 * the target for `lockoutDuration` minutes and is itself refused with the lockout error; the
 * caller learns that this call engaged the lock (for the one Identifier.Lockout event).
 */
export async function recordFailure(
  db: Knex,
  target: SentinelTarget,
  policy: SentinelPolicy,
): Promise<{ locked: boolean }> {
  return withTransaction(db, async (trx) => {
    const now = Date.now();
    const row = await countFailure(trx, target, now);
    if (row.locked_until && row.locked_until > now) {
      // Locked by a concurrent failure while this one was being checked: refused, not counted again.
      throw new RequestError('session.verification_blocked_too_many_attempts');
    }
    if (row.failures < policy.maxAttempts) {
      return { locked: false };
    }
    await lockTarget(trx, target, now + policy.lockoutDuration * 60_000);
    return { locked: true };
  });
}

/** A success ends the run of failures, unless a concurrent failure locked the target meanwhile. */
export async function recordSuccess(db: Queryable, target: SentinelTarget): Promise<void> {
  if (!(await deleteUnlockedTarget(db, target, Date.now()))) {
    await assertNotLocked(db, target);
  }
}

/** Counts a failure and throws the error the caller should answer with. */
export async function failVerification(
  db: Knex,
  target: SentinelTarget,
  policy: SentinelPolicy,
  error: RequestError,
  onLock: () => Promise<void> = async () => {},
): Promise<never> {
  const { locked } = await recordFailure(db, target, policy);
  verificationFailures.inc();
  if (locked) {
    lockouts.inc();
    await onLock();
    throw new RequestError('session.verification_blocked_too_many_attempts');
  }
  throw error;
}
