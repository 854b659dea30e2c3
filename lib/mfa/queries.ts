import { z } from 'zod';

import type { Queryable } from '../storage/database.ts';
import { jsonColumn } from '../storage/json-column.ts';
import { openSecret, sealedColumns, sealSecret } from '../storage/sealed-columns.ts';
import type { StoredBackupCode } from './backup-codes.ts';

export const factorTypes = ['Totp', 'WebAuthn', 'BackupCode'] as const;
export type FactorType = (typeof factorTypes)[number];

/**
 * A row of `user_mfa_verifications` as read: a TOTP secret opened. A passkey (WebAuthn) has its
 * credential id, COSE public key (base64url), signature counter, transports (JSON) and name;
 * `credential_id` is '' for the other types (one TOTP and one set of backup codes per user).
 */
export type FactorRow = {
  id: string;
  user_id: string;
  type: FactorType;
  secret: string | null;
  codes: string | null;
  last_used_step: number | null;
  last_used_at: number | null;
  created_at: number;
  credential_id: string;
  public_key: string | null;
  counter: number | null;
  transports: string | null;
  name: string | null;
};

const storedTransportsOf = jsonColumn('user_mfa_verifications', 'transports', z.array(z.string()));

export const transportsOf = (row: FactorRow): string[] => (row.transports ? storedTransportsOf(row.transports) : []);

const storedCodesOf = jsonColumn(
  'user_mfa_verifications',
  'codes',
  z.array(z.object({ digest: z.string(), usedAt: z.number().nullable() })),
);

export const codesOf = (row: FactorRow): StoredBackupCode[] => (row.codes ? storedCodesOf(row.codes) : []);

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

/** A passkey by its credential id: any user's (passwordless sign-in names no user). */
export async function findWebAuthnFactor(db: Queryable, credentialId: string): Promise<FactorRow | undefined> {
  return db('user_mfa_verifications')
    .where({ type: 'WebAuthn', credential_id: credentialId })
    .first<FactorRow | undefined>();
}

/** Records a passkey's use, unless its signature counter moved since `row` was read. */
export async function recordWebAuthnUse(db: Queryable, row: FactorRow, counter: number): Promise<boolean> {
  const updated = await db('user_mfa_verifications')
    .where({ id: row.id })
    .where((same) => {
      if (row.counter === null) {
        same.whereNull('counter');
      } else {
        same.where('counter', row.counter);
      }
    })
    .update({ counter, last_used_at: Date.now() });
  return updated === 1;
}

/** Stores the row with its TOTP secret sealed; the unique index refuses a second factor of a type. */
export async function insertFactor(db: Queryable, row: FactorRow): Promise<void> {
  await db('user_mfa_verifications').insert(
    row.secret === null ? row : { ...row, secret: sealSecret(db, sealedColumns.totpSecrets, row.id, row.secret) },
  );
}

/** Records an accepted TOTP step, unless the same or a later one was recorded already. */
export async function recordTotpStep(db: Queryable, id: string, step: number): Promise<boolean> {
  const updated = await db('user_mfa_verifications')
    .where({ id })
    .where((later) => {
      later.whereNull('last_used_step').orWhere('last_used_step', '<', step);
    })
    .update({ last_used_step: step, last_used_at: Date.now() });
  return updated === 1;
}

/** Replaces the backup codes, unless they changed since `row` was read. */
export async function replaceBackupCodes(db: Queryable, row: FactorRow, codes: StoredBackupCode[]): Promise<boolean> {
  const updated = await db('user_mfa_verifications')
    .where({ id: row.id, codes: row.codes })
    .update({ codes: JSON.stringify(codes), last_used_at: Date.now() });
  return updated === 1;
}

/** False when the user has no factor with that id. */
export async function deleteFactorRow(db: Queryable, userId: string, id: string): Promise<boolean> {
  return (await db('user_mfa_verifications').where({ user_id: userId, id }).delete()) > 0;
}
