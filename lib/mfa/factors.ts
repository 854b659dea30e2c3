import { z } from 'zod';

import type { ErrorCode } from '../http/error-codes.ts';
import { RequestError } from '../http/errors.ts';
import { isUniqueViolation, type Queryable } from '../storage/database.ts';
import { generateId } from '../storage/ids.ts';
import { openSecret, sealSecret, sealedColumns } from '../storage/sealed-columns.ts';
import { remainingCodes, type StoredBackupCode } from './backup-codes.ts';

export const factorTypes = ['Totp', 'BackupCode'] as const;
export type FactorType = (typeof factorTypes)[number];

export type FactorRow = {
  id: string;
  user_id: string;
  type: FactorType;
  secret: string | null;
  codes: string | null;
  last_used_step: number | null;
  last_used_at: number | null;
  created_at: number;
};

/** A factor as Logto's `GET /api/users/:userId/mfa-verifications` shows it: never its secret. */
export const mfaVerificationSchema = z.object({
  id: z.string(),
  type: z.enum(factorTypes),
  createdAt: z.string(),
  lastUsedAt: z.string().optional(),
  remainCodes: z.number().optional(),
});

export type MfaVerification = z.output<typeof mfaVerificationSchema>;

export const codesOf = (row: FactorRow): StoredBackupCode[] =>
  row.codes ? (JSON.parse(row.codes) as StoredBackupCode[]) : [];

export function toMfaVerification(row: FactorRow): MfaVerification {
  return {
    id: row.id,
    type: row.type,
    createdAt: new Date(row.created_at).toISOString(),
    ...(row.last_used_at !== null && { lastUsedAt: new Date(row.last_used_at).toISOString() }),
    ...(row.type === 'BackupCode' && { remainCodes: remainingCodes(codesOf(row)) }),
  };
}

/** Rows as read: a TOTP secret opened. */
const opened = (db: Queryable, row: FactorRow): FactorRow =>
  row.secret === null ? row : { ...row, secret: openSecret(db, sealedColumns.totpSecrets, row.id, row.secret) };

export async function listFactors(db: Queryable, userId: string): Promise<FactorRow[]> {
  const rows = await db('user_mfa_verifications')
    .where({ user_id: userId })
    .orderBy('created_at', 'asc')
    .orderBy('id', 'asc')
    .select<FactorRow[]>('*');
  return rows.map((row) => opened(db, row));
}

export async function findFactor(db: Queryable, userId: string, type: FactorType): Promise<FactorRow | undefined> {
  const row = await db('user_mfa_verifications').where({ user_id: userId, type }).first<FactorRow | undefined>();
  return row && opened(db, row);
}

/** Backup codes alone are no second factor: they stand in for one that is lost. */
export const hasUsableFactor = (factors: FactorRow[]): boolean =>
  factors.some((factor) => factor.type !== 'BackupCode' || remainingCodes(codesOf(factor)) > 0);

const inUse = {
  Totp: 'user.totp_already_in_use',
  BackupCode: 'user.backup_code_already_in_use',
} as const satisfies Record<FactorType, ErrorCode>;

/**
 * Binds a factor. A user has one of each type; new backup codes replace a set whose codes are all
 * used (or any set, with `replace`), since that is how a user renews them.
 */
export async function addFactor(
  trx: Queryable,
  userId: string,
  factor: { type: 'Totp'; secret: string; lastUsedStep?: number } | { type: 'BackupCode'; codes: StoredBackupCode[] },
  { replace = false } = {},
): Promise<FactorRow> {
  const existing = await findFactor(trx, userId, factor.type);
  if (existing) {
    const renewable = factor.type === 'BackupCode' && (replace || remainingCodes(codesOf(existing)) === 0);
    if (!renewable) {
      throw new RequestError(inUse[factor.type]);
    }
    await trx('user_mfa_verifications').where({ id: existing.id }).delete();
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
  };
  try {
    await trx('user_mfa_verifications').insert(
      row.secret === null ? row : { ...row, secret: sealSecret(trx, sealedColumns.totpSecrets, row.id, row.secret) },
    );
  } catch (error) {
    if (isUniqueViolation(error)) {
      throw new RequestError(inUse[factor.type]);
    }
    throw error;
  }
  return row;
}

/**
 * Records a use: the TOTP step accepted, or the backup codes with one marked used. Conditional on
 * the row as read, so two concurrent uses of one code cannot both succeed.
 */
export async function recordFactorUse(
  db: Queryable,
  row: FactorRow,
  use: { lastUsedStep: number } | { codes: StoredBackupCode[] },
): Promise<boolean> {
  const now = Date.now();
  if ('lastUsedStep' in use) {
    const updated = await db('user_mfa_verifications')
      .where({ id: row.id })
      .where((step) => {
        step.whereNull('last_used_step').orWhere('last_used_step', '<', use.lastUsedStep);
      })
      .update({ last_used_step: use.lastUsedStep, last_used_at: now });
    return updated === 1;
  }
  const updated = await db('user_mfa_verifications')
    .where({ id: row.id, codes: row.codes })
    .update({ codes: JSON.stringify(use.codes), last_used_at: now });
  return updated === 1;
}

export async function deleteFactor(trx: Queryable, userId: string, id: string): Promise<void> {
  const deleted = await trx('user_mfa_verifications').where({ user_id: userId, id }).delete();
  if (deleted === 0) {
    throw new RequestError('entity.not_exists_with_id', { entity: 'MFA verification', id });
  }
}
