import type { Knex } from 'knex';

import type { Queryable } from '../../storage/database.ts';
import { bumpCacheVersion, type SharedCache } from '../../storage/shared-cache.ts';
import { withTransaction } from '../../storage/transaction.ts';
import { deleteRevokedTokensExpiredBy, insertRevokedToken, revokedJtisExpiringAfter } from './revoked-token-queries.ts';

/**
 * The denylist of revoked JWT access tokens, by `jti`, kept until each token's own expiry. A JWT
 * is checked without the database, so revoking one means remembering it: every instance holds the
 * unexpired jtis in memory, reloaded only when a revocation bumps the `revokedTokens` version.
 */

/** Verifiers accept a token a few seconds past `exp` (clock skew): its row outlives it by more. */
const keptPastExpiry = 60_000;

const denylist = (db: Queryable, cache: SharedCache): Promise<ReadonlySet<string>> =>
  cache.get(
    'revokedTokens',
    'jtis',
    async () => new Set(await revokedJtisExpiringAfter(db, Date.now() - keptPastExpiry)),
  );

export function isRevoked(db: Queryable, cache: SharedCache, jti: string): Promise<boolean> {
  return denylist(db, cache).then((jtis) => jtis.has(jti));
}

export type RevokedToken = { jti: string; clientId: string; expiresAt: number };

/** Records a revocation (once: a second one of the same token changes nothing). */
export async function recordRevokedToken(db: Knex, cache: SharedCache, token: RevokedToken): Promise<void> {
  if (await isRevoked(db, cache, token.jti)) {
    return;
  }
  await withTransaction(db, async (trx) => {
    await insertRevokedToken(trx, token);
    await bumpCacheVersion(trx, 'revokedTokens');
  });
}

/**
 * Housekeeping: forgets tokens that have expired (they are refused for that). The in-memory sets
 * keep them until the next revocation, which costs nothing but their bytes.
 */
export async function pruneRevokedTokens(db: Queryable, now = Date.now()): Promise<number> {
  return deleteRevokedTokensExpiredBy(db, now - keptPastExpiry);
}
