import { z } from 'zod';

import { newPasskeySchema } from '../mfa/webauthn.ts';
import type { Queryable } from '../storage/database.ts';
import { jsonColumn } from '../storage/json-column.ts';

/* `account_verifications`: what a signed-in user proved to the Account API (a password, a code), until used. */

type VerificationRow = {
  id: string;
  user_id: string;
  type: 'Password' | 'EmailVerificationCode' | 'PhoneVerificationCode' | 'WebAuthn';
  identifier_type: 'email' | 'phone' | null;
  identifier_value: string | null;
  code_id: string | null;
  webauthn: string | null;
  verified: number | boolean;
  expires_at: number;
};

export type AccountVerification = {
  id: string;
  type: VerificationRow['type'];
  identifier?: { type: 'email' | 'phone'; value: string };
  codeId?: string;
  /** A passkey registration: its challenge, and the passkey once the answer verified. */
  webAuthn?: WebAuthnRegistration;
  verified: boolean;
  expiresAt: number;
};

const webAuthnRegistrationSchema = z.object({ challenge: z.string(), passkey: newPasskeySchema.optional() });
type WebAuthnRegistration = z.output<typeof webAuthnRegistrationSchema>;
const webAuthnOf = jsonColumn('account_verifications', 'webauthn', webAuthnRegistrationSchema);

const toVerification = (row: VerificationRow): AccountVerification => ({
  id: row.id,
  type: row.type,
  ...(row.identifier_type &&
    row.identifier_value && { identifier: { type: row.identifier_type, value: row.identifier_value } }),
  ...(row.code_id && { codeId: row.code_id }),
  ...(row.webauthn && { webAuthn: webAuthnOf(row.webauthn) }),
  verified: Boolean(row.verified),
  expiresAt: row.expires_at,
});

export async function insertVerification(
  db: Queryable,
  userId: string,
  verification: AccountVerification,
): Promise<void> {
  await db('account_verifications').insert({
    id: verification.id,
    user_id: userId,
    type: verification.type,
    identifier_type: verification.identifier?.type ?? null,
    identifier_value: verification.identifier?.value ?? null,
    code_id: verification.codeId ?? null,
    webauthn: verification.webAuthn ? JSON.stringify(verification.webAuthn) : null,
    verified: verification.verified,
    expires_at: verification.expiresAt,
  });
}

/** The user's verification, unless it expired. */
export async function findLiveVerification(
  db: Queryable,
  userId: string,
  id: string,
): Promise<AccountVerification | undefined> {
  const row = await db('account_verifications')
    .where({ id, user_id: userId })
    .where('expires_at', '>', Date.now())
    .first<VerificationRow | undefined>();
  return row && toVerification(row);
}

export async function markVerified(db: Queryable, id: string, webAuthn?: WebAuthnRegistration): Promise<void> {
  await db('account_verifications')
    .where({ id })
    .update({ verified: true, ...(webAuthn && { webauthn: JSON.stringify(webAuthn) }) });
}

/** Verifications are used once: a change of identity or password consumes the proof it used. */
export async function consumeVerifications(db: Queryable, ids: string[]): Promise<void> {
  await db('account_verifications').whereIn('id', ids).delete();
}

export async function purgeExpiredVerifications(db: Queryable): Promise<number> {
  return db('account_verifications').where('expires_at', '<=', Date.now()).delete();
}
