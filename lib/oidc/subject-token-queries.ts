import type { Queryable } from '../storage/database.ts';

/* `subject_tokens`: impersonation tokens, by the hash of the token (the token itself is not kept). */

export type ImpersonationRow = {
  id: string;
  user_id: string;
  application_id: string | null;
  expires_at: number;
  consumed_at: number | null;
};

export async function findImpersonationToken(db: Queryable, tokenHash: string): Promise<ImpersonationRow | undefined> {
  return db('subject_tokens').where({ token_hash: tokenHash }).first<ImpersonationRow | undefined>();
}

/** Marks the token used; false when it was used already. */
export async function consumeImpersonationToken(db: Queryable, id: string): Promise<boolean> {
  return (await db('subject_tokens').where({ id }).whereNull('consumed_at').update({ consumed_at: Date.now() })) === 1;
}
