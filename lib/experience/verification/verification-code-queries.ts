import type { CodePurpose } from '../../messages/codes.ts';
import type { Queryable } from '../../storage/database.ts';

/* `verification_codes`: the codes sent to an email or phone, by recipient key, as keyed hashes. */

export type CodeRow = {
  id: string;
  purpose: CodePurpose;
  code_hash: string;
  attempts: number;
  expires_at: number;
  verified_at: number | null;
};

export async function insertCode(
  db: Queryable,
  code: { id: string; recipient: string; purpose: CodePurpose; codeHash: string; createdAt: number; expiresAt: number },
): Promise<void> {
  await db('verification_codes').insert({
    id: code.id,
    recipient: code.recipient,
    purpose: code.purpose,
    code_hash: code.codeHash,
    attempts: 0,
    created_at: code.createdAt,
    expires_at: code.expiresAt,
  });
}

export async function deleteCode(db: Queryable, id: string): Promise<void> {
  await db('verification_codes').where({ id }).delete();
}

export async function deleteCodesExpiredBefore(db: Queryable, recipient: string, before: number): Promise<void> {
  await db('verification_codes').where({ recipient }).andWhere('expires_at', '<', before).delete();
}

/** The id of the recipient's newest code not used yet (of `purpose`, when given). */
export async function newestUnusedCodeId(
  db: Queryable,
  recipient: string,
  purpose: CodePurpose | undefined,
): Promise<string | undefined> {
  const row = await db('verification_codes')
    .where({ recipient, ...(purpose && { purpose }) })
    .whereNull('verified_at')
    .orderBy('created_at', 'desc')
    .first<{ id: string } | undefined>('id');
  return row?.id;
}

/**
 * Takes one try of a live, unused code that has tries left, atomically: false when it had none to
 * take (or is not the recipient's, or not of `purpose`).
 */
export async function claimCodeTry(
  db: Queryable,
  { id, recipient, purpose }: { id: string; recipient: string; purpose: CodePurpose | undefined },
  now: number,
  maxAttempts: number,
): Promise<boolean> {
  const claimed = await db('verification_codes')
    .where({ id, recipient, ...(purpose && { purpose }) })
    .whereNull('verified_at')
    .andWhere('expires_at', '>', now)
    .andWhere('attempts', '<', maxAttempts)
    .increment('attempts', 1);
  return claimed > 0;
}

export async function findCodeRow(db: Queryable, id: string, recipient: string): Promise<CodeRow | undefined> {
  return db('verification_codes').where({ id, recipient }).first<CodeRow | undefined>();
}

/** Marks the code used; false when it was used already. */
export async function consumeCode(db: Queryable, id: string, now: number): Promise<boolean> {
  const consumed = await db('verification_codes').where({ id }).whereNull('verified_at').update({ verified_at: now });
  return consumed > 0;
}
