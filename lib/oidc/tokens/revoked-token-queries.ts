import type { Queryable } from '../../storage/database.ts';

/* `revoked_tokens`: the denylist of revoked JWT access tokens, by `jti` (oidc/tokens/revoked-tokens.ts). */

/** The jtis of tokens that expire after `after`. */
export async function revokedJtisExpiringAfter(db: Queryable, after: number): Promise<string[]> {
  return db('revoked_tokens').where('expires_at', '>', after).pluck('jti');
}

/** Records a revocation; one already recorded is kept as it is. */
export async function insertRevokedToken(
  db: Queryable,
  token: { jti: string; clientId: string; expiresAt: number },
): Promise<void> {
  await db('revoked_tokens')
    .insert({ jti: token.jti, client_id: token.clientId, expires_at: token.expiresAt, revoked_at: Date.now() })
    .onConflict('jti')
    .ignore();
}

export async function deleteRevokedTokensExpiredBy(db: Queryable, cutoff: number): Promise<number> {
  return db('revoked_tokens').where('expires_at', '<=', cutoff).delete();
}
