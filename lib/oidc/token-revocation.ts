import type { Knex } from 'knex';
import { errors, type KoaContextWithOIDC, type Provider } from 'oidc-provider';

import type { SharedCache } from '../storage/shared-cache.ts';
import { verifyAccessToken } from './access-tokens.ts';
import { recordRevokedToken } from './revoked-tokens.ts';

type Dependencies = { issuer: string; db: Knex; cache: SharedCache };

/**
 * RFC 7009 for our JWT access tokens at /oidc/token/revocation. oidc-provider authenticates the
 * client, then refuses any JWT with `unsupported_token_type` (it cannot find one in its store).
 * Such a refusal is taken over here: a token that verifies as ours, issued to the authenticated
 * client, goes on the denylist until it expires (the same rule as `revocation.allowedPolicy` for
 * opaque tokens); whatever the token, the answer is RFC 7009's 200 with an empty body, since an
 * unknown or foreign token is no error there. Client authentication failures stay the provider's.
 */
export function revokeJwtAccessTokens(provider: Provider, { issuer, db, cache }: Dependencies): void {
  const refusedAsJwt = new WeakSet();
  provider.on('revocation.error', (ctx, error) => {
    if (error instanceof errors.UnsupportedTokenType) {
      refusedAsJwt.add(ctx);
    }
  });

  // Every request of the provider passes here: without an async layer of its own until it is a refusal.
  provider.use((ctx, next) =>
    next().then(() => (refusedAsJwt.has(ctx) ? answerRevocation(ctx as KoaContextWithOIDC) : undefined)),
  );

  async function answerRevocation(ctx: KoaContextWithOIDC): Promise<void> {
    const { oidc } = ctx;
    const claims = await verifyAccessToken(db, cache, issuer, String(oidc.params?.token)).catch(() => undefined);
    if (claims && claims.client_id === oidc.client?.clientId) {
      await recordRevokedToken(db, cache, {
        jti: claims.jti,
        clientId: claims.client_id,
        expiresAt: claims.exp * 1000,
      });
    }
    // As the provider answers a revocation of an opaque token.
    ctx.status = 200;
    ctx.body = '';
    ctx.type = 'text/plain';
  }
}
