import type { Knex } from 'knex';
import type { Client, KoaContextWithOIDC } from 'oidc-provider';

import type { SharedCache } from '../../storage/shared-cache.ts';
import { AccessTokenRefused, verifyAccessToken } from './access-tokens.ts';
import type { JwtAnswer } from './jwt-refusals.ts';
import { recordRevokedToken } from './revoked-tokens.ts';

type Dependencies = { issuer: string; db: Knex; cache: SharedCache };

/** A client revokes only tokens issued to it (`features.revocation.allowedPolicy`, and for JWTs below). */
export const mayRevoke = (client: Client, tokenClientId: string | undefined): boolean =>
  tokenClientId === client.clientId;

/**
 * RFC 7009 for our JWT access tokens at /oidc/token/revocation (`jwt-refusals.ts` hands them
 * here): a token that verifies as ours, issued to the authenticated client, goes on the denylist
 * until it expires; whatever the token, the answer is RFC 7009's 200 with an empty body, since an
 * unknown or foreign token is no error there.
 */
export function revokeJwtAccessToken({ issuer, db, cache }: Dependencies): JwtAnswer {
  return async function answerRevocation(ctx: KoaContextWithOIDC): Promise<void> {
    const { oidc } = ctx;
    // A token refused is no error here; a database that cannot answer is one (the revocation did not happen).
    const claims = await verifyAccessToken(db, cache, issuer, String(oidc.params?.token)).catch((error: unknown) => {
      if (error instanceof AccessTokenRefused) {
        return undefined;
      }
      throw error;
    });
    if (claims && oidc.client && mayRevoke(oidc.client, claims.client_id)) {
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
  };
}
