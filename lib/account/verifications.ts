import { RequestError } from '../http/errors.ts';
import type { Queryable } from '../storage/database.ts';
import { generateId } from '../storage/ids.ts';
import { type AccountVerification, findLiveVerification, insertVerification } from './verification-queries.ts';

/** An Account API verification lives ten minutes, as Logto's. */
export const verificationTtl = 10 * 60 * 1000;

/** Records what the user proved, for the change that follows. */
export async function createVerification(
  db: Queryable,
  userId: string,
  record: Omit<AccountVerification, 'id' | 'expiresAt'>,
): Promise<AccountVerification> {
  const verification = { ...record, id: generateId(), expiresAt: Date.now() + verificationTtl };
  await insertVerification(db, userId, verification);
  return verification;
}

/** A live verification of this user, or 404 `verification_record.not_found`. */
export async function getVerification(
  db: Queryable,
  userId: string,
  id: string | undefined,
): Promise<AccountVerification> {
  const verification = id ? await findLiveVerification(db, userId, id) : undefined;
  if (!verification) {
    throw new RequestError('verification_record.not_found');
  }
  return verification;
}

/** Where a sensitive change names its identity proof. */
export const proofHeader = (ctx: { get(name: string): string }): string | undefined =>
  ctx.get('logto-verification-id') || undefined;

/**
 * The `logto-verification-id` proof before a sensitive change: the user's password, or a code sent
 * to an email or phone the account still has. As in Logto (and GitHub's sudo mode), one proof
 * covers the changes of its ten minutes: account pages verify once, then change several things.
 * An unknown, expired or unverified proof is 401 `verification_record.permission_denied`.
 */
export async function requireIdentityProof(
  db: Queryable,
  user: { id: string; primary_email: string | null; primary_phone: string | null },
  id: string | undefined,
): Promise<void> {
  const proof = id ? await findLiveVerification(db, user.id, id) : undefined;
  if (!proof) {
    throw new RequestError('verification_record.permission_denied');
  }
  const ownsIdentifier =
    proof.type === 'Password' ||
    (proof.identifier?.type === 'email' &&
      proof.identifier.value.toLowerCase() === user.primary_email?.toLowerCase()) ||
    (proof.identifier?.type === 'phone' && proof.identifier.value === user.primary_phone);
  if (!proof.verified || !ownsIdentifier) {
    throw new RequestError('verification_record.permission_denied');
  }
}
