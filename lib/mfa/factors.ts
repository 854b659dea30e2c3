import { z } from 'zod';

import type { ErrorCode } from '../http/error-codes.ts';
import { RequestError } from '../http/errors.ts';
import { isUniqueViolation, type Queryable } from '../storage/database.ts';
import { generateId } from '../storage/ids.ts';
import { remainingCodes, type StoredBackupCode } from './backup-codes.ts';
import {
  codesOf,
  deleteFactorRow,
  type FactorRow,
  type FactorType,
  factorTypes,
  findFactor,
  findWebAuthnFactor,
  insertFactor,
  listFactors,
  recordTotpStep,
  recordWebAuthnUse,
  replaceBackupCodes,
} from './queries.ts';
import type { NewPasskey } from './webauthn.ts';

/** A factor as Logto's `GET /api/users/:userId/mfa-verifications` shows it: never its secret. */
export const mfaVerificationSchema = z.object({
  id: z.string(),
  type: z.enum(factorTypes),
  createdAt: z.string(),
  lastUsedAt: z.string().optional(),
  remainCodes: z.number().optional(),
  /** A passkey's name (Logto's). */
  name: z.string().optional(),
});

export type MfaVerification = z.output<typeof mfaVerificationSchema>;

export function toMfaVerification(row: FactorRow): MfaVerification {
  return {
    id: row.id,
    type: row.type,
    createdAt: new Date(row.created_at).toISOString(),
    ...(row.last_used_at !== null && { lastUsedAt: new Date(row.last_used_at).toISOString() }),
    ...(row.type === 'BackupCode' && { remainCodes: remainingCodes(codesOf(row)) }),
    ...(row.name !== null && { name: row.name }),
  };
}

/** Backup codes alone are no second factor: they stand in for one that is lost. */
export const hasUsableFactor = (factors: FactorRow[]): boolean =>
  factors.some((factor) => factor.type !== 'BackupCode' || remainingCodes(codesOf(factor)) > 0);

/**
 * Backup codes stand in for a lost factor: a user without another has nothing they stand in for
 * (422 `session.mfa.backup_code_can_not_be_alone`, Logto's rule wherever codes are bound).
 */
export async function assertBackupCodesNotAlone(db: Queryable, userId: string): Promise<void> {
  const others = (await listFactors(db, userId)).filter((factor) => factor.type !== 'BackupCode');
  if (!hasUsableFactor(others)) {
    throw new RequestError('session.mfa.backup_code_can_not_be_alone');
  }
}

const inUse = {
  Totp: 'user.totp_already_in_use',
  WebAuthn: 'user.webauthn_already_in_use',
  BackupCode: 'user.backup_code_already_in_use',
} as const satisfies Record<FactorType, ErrorCode>;

export type NewFactor =
  | { type: 'Totp'; secret: string; lastUsedStep?: number }
  | { type: 'BackupCode'; codes: StoredBackupCode[] }
  | { type: 'WebAuthn'; passkey: NewPasskey; name?: string };

const webAuthnColumns = (factor: NewFactor) =>
  factor.type === 'WebAuthn'
    ? {
        credential_id: factor.passkey.credentialId,
        public_key: factor.passkey.publicKey,
        counter: factor.passkey.counter,
        transports: JSON.stringify(factor.passkey.transports),
        name: factor.name ?? null,
      }
    : { credential_id: '', public_key: null, counter: null, transports: null, name: null };

/**
 * Binds a factor. A user has one TOTP and one set of backup codes, and any number of passkeys (each
 * once); new backup codes replace a set whose codes are all used (or any set, with `replace`), since
 * that is how a user renews them.
 */
export async function addFactor(
  trx: Queryable,
  userId: string,
  factor: NewFactor,
  { replace = false } = {},
): Promise<FactorRow> {
  if (factor.type === 'WebAuthn') {
    // A credential id is the authenticator's: it names one account's passkey, never two.
    if (await findWebAuthnFactor(trx, factor.passkey.credentialId)) {
      throw new RequestError(inUse.WebAuthn);
    }
  } else {
    const existing = await findFactor(trx, userId, factor.type);
    if (existing) {
      const renewable = replace || (factor.type === 'BackupCode' && remainingCodes(codesOf(existing)) === 0);
      if (!renewable) {
        throw new RequestError(inUse[factor.type]);
      }
      await deleteFactorRow(trx, userId, existing.id);
    }
  }
  const row: FactorRow = {
    id: generateId(),
    user_id: userId,
    type: factor.type,
    secret: factor.type === 'Totp' ? factor.secret : null,
    codes: factor.type === 'BackupCode' ? JSON.stringify(factor.codes) : null,
    last_used_step: factor.type === 'Totp' ? (factor.lastUsedStep ?? null) : null,
    last_used_at: null,
    created_at: Date.now(),
    ...webAuthnColumns(factor),
  };
  try {
    await insertFactor(trx, row);
  } catch (error) {
    if (isUniqueViolation(error)) {
      throw new RequestError(inUse[factor.type]);
    }
    throw error;
  }
  return row;
}

/**
 * Records a use: the TOTP step accepted, the backup codes with one marked used, or a passkey's new
 * signature counter. Conditional on the row as read, so two concurrent uses of one code (or one
 * assertion) cannot both succeed.
 */
export async function recordFactorUse(
  db: Queryable,
  row: FactorRow,
  use: { lastUsedStep: number } | { codes: StoredBackupCode[] } | { counter: number },
): Promise<boolean> {
  if ('lastUsedStep' in use) {
    return recordTotpStep(db, row.id, use.lastUsedStep);
  }
  return 'codes' in use ? replaceBackupCodes(db, row, use.codes) : recordWebAuthnUse(db, row, use.counter);
}

export async function deleteFactor(trx: Queryable, userId: string, id: string): Promise<void> {
  if (!(await deleteFactorRow(trx, userId, id))) {
    throw new RequestError('entity.not_exists_with_id', { entity: 'MFA verification', id });
  }
}
