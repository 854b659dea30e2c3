import type { Queryable } from '../storage/database.ts';

/*
 * `console_setup_tokens`: the hashes of the console first run's setup tokens, void once an
 * administrator exists. Here rather than in console/, because roles/ void them.
 */

export async function insertSetupToken(db: Queryable, tokenHash: string): Promise<void> {
  await db('console_setup_tokens').insert({ token_hash: tokenHash, created_at: Date.now() });
}

/** False when no token had that hash. */
export async function deleteSetupToken(db: Queryable, tokenHash: string): Promise<boolean> {
  return (await db('console_setup_tokens').where({ token_hash: tokenHash }).delete()) > 0;
}

export async function deleteSetupTokens(db: Queryable): Promise<void> {
  await db('console_setup_tokens').delete();
}
