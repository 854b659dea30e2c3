import { RequestError } from '../http/errors.ts';
import type { Queryable } from '../storage/database.ts';
import { generateId } from '../storage/ids.ts';

/** An Account API verification lives ten minutes, as Logto's. */
export const verificationTtl = 10 * 60 * 1000;

type Row = {
  id: string;
  user_id: string;
  type: 'Password' | 'EmailVerificationCode' | 'PhoneVerificationCode';
  identifier_type: 'email' | 'phone' | null;
  identifier_value: string | null;
  code_id: string | null;
  verified: number | boolean;
  expires_at: number;
};

export type AccountVerification = {
  id: string;
  type: Row['type'];
  identifier?: { type: 'email' | 'phone'; value: string };
  codeId?: string;
  verified: boolean;
  expiresAt: number;
};

const toVerification = (row: Row): AccountVerification => ({
  id: row.id,
  type: row.type,
  ...(row.identifier_type &&
    row.identifier_value && { identifier: { type: row.identifier_type, value: row.identifier_value } }),
  ...(row.code_id && { codeId: row.code_id }),
  verified: Boolean(row.verified),
  expiresAt: row.expires_at,
});

export async function insertVerification(
  db: Queryable,
  userId: string,
  record: Omit<AccountVerification, 'id' | 'expiresAt'>,
): Promise<AccountVerification> {
  const verification = { ...record, id: generateId(), expiresAt: Date.now() + verificationTtl };
  await db('account_verifications').insert({
    id: verification.id,
    user_id: userId,
    type: record.type,
    identifier_type: record.identifier?.type ?? null,
    identifier_value: record.identifier?.value ?? null,
    code_id: record.codeId ?? null,
    verified: record.verified,
    expires_at: verification.expiresAt,
  });
  return verification;
}

/** A live verification of this user, or 404 `verification_record.not_found`. */
export async function getVerification(
  db: Queryable,
  userId: string,
  id: string | undefined,
): Promise<AccountVerification> {
  const row = id
    ? await db('account_verifications')
        .where({ id, user_id: userId })
        .where('expires_at', '>', Date.now())
        .first<Row | undefined>()
    : undefined;
  if (!row) {
    throw new RequestError('verification_record.not_found');
  }
  return toVerification(row);
}

export async function markVerified(db: Queryable, id: string): Promise<void> {
  await db('account_verifications').where({ id }).update({ verified: true });
}

/** Verifications are used once: a change of identity or password consumes the proof it used. */
export async function consumeVerifications(db: Queryable, ids: string[]): Promise<void> {
  await db('account_verifications').whereIn('id', ids).delete();
}

export async function purgeExpiredVerifications(db: Queryable): Promise<number> {
  return db('account_verifications').where('expires_at', '<=', Date.now()).delete();
}

/** Where a sensitive change names its identity proof. */
export const proofHeader = (ctx: { get(name: string): string }): string | undefined =>
  ctx.get('logto-verification-id') || undefined;

/**
 * The `logto-verification-id` proof before a sensitive change: the user's password, or a code sent
 * to an email or phone the account already has.
 */
export async function requireIdentityProof(
  db: Queryable,
  user: { id: string; primary_email: string | null; primary_phone: string | null },
  id: string | undefined,
): Promise<AccountVerification> {
  if (!id) {
    throw new RequestError('verification_record.permission_denied');
  }
  const proof = await getVerification(db, user.id, id);
  const ownsIdentifier =
    proof.type === 'Password' ||
    (proof.identifier?.type === 'email' &&
      proof.identifier.value.toLowerCase() === user.primary_email?.toLowerCase()) ||
    (proof.identifier?.type === 'phone' && proof.identifier.value === user.primary_phone);
  if (!proof.verified || !ownsIdentifier) {
    throw new RequestError('verification_record.permission_denied');
  }
  return proof;
}
