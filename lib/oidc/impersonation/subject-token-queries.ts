import { createHash } from 'node:crypto';

import type { Queryable } from '../../storage/database.ts';

/* `subject_tokens`: impersonation tokens, by the hash of the token (the token itself is not kept). */

/** The key a token's row is found by. */
export const hashSubjectToken = (token: string) => createHash('sha256').update(token).digest('hex');

export type ImpersonationRow = {
  id: string;
  user_id: string;
  application_id: string | null;
  expires_at: number;
  consumed_at: number | null;
};

export async function insertImpersonationToken(
  db: Queryable,
  token: {
    id: string;
    tokenHash: string;
    userId: string;
    applicationId: string | null;
    context: Record<string, unknown>;
    createdAt: number;
    expiresAt: number;
  },
): Promise<void> {
  await db('subject_tokens').insert({
    id: token.id,
    token_hash: token.tokenHash,
    user_id: token.userId,
    application_id: token.applicationId,
    context: JSON.stringify(token.context),
    created_at: token.createdAt,
    expires_at: token.expiresAt,
  });
}

export async function findImpersonationToken(db: Queryable, tokenHash: string): Promise<ImpersonationRow | undefined> {
  return db('subject_tokens').where({ token_hash: tokenHash }).first<ImpersonationRow | undefined>();
}

/** Marks the token used; false when it was used already. */
export async function consumeImpersonationToken(db: Queryable, id: string): Promise<boolean> {
  return (await db('subject_tokens').where({ id }).whereNull('consumed_at').update({ consumed_at: Date.now() })) === 1;
}
