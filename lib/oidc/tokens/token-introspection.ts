import type { Client, KoaContextWithOIDC } from 'oidc-provider';

import { isUrlClientId } from '../../shared/url-client-ids.ts';
import type { Queryable } from '../../storage/database.ts';
import type { SharedCache } from '../../storage/shared-cache.ts';
import { userStanding } from '../../users/queries.ts';
import type { ClientIdMetadataDocuments } from '../client-id-metadata/documents.ts';
import { findClient } from '../clients/clients.ts';
import {
  type AccessTokenClaims,
  AccessTokenRefused,
  isApplicationToken,
  isDpopBound,
  verifyAccessToken,
} from './access-tokens.ts';
import type { JwtAnswer } from './jwt-refusals.ts';

type Dependencies = { issuer: string; db: Queryable; cache: SharedCache; documents: ClientIdMetadataDocuments };

/**
 * Confidential clients (resource servers) may introspect any token; public ones only their own
 * (`features.introspection.allowedPolicy`, and for JWTs below).
 */
export const mayIntrospect = (client: Client, tokenClientId: string | undefined): boolean =>
  client.clientAuthMethod !== 'none' || tokenClientId === client.clientId;

const inactive = { active: false } as const;

/**
 * RFC 7662 for our JWT access tokens at /oidc/token/introspection (`jwt-refusals.ts` hands them
 * here). A token is active when it verifies as ours (`verifyAccessToken`: our keys and issuer,
 * unexpired, not on the revocation denylist) and its holder may still act: the application it
 * was issued to exists and, for a user's token, the user is neither deleted nor suspended (the
 * management API's rule). Then the answer is its claims (`act` and `cnf` included when it has
 * them) with `active: true` and its `token_type`; in every other case it is `{"active": false}`
 * with 200, as RFC 7662 §2.2 asks: a bad token is no error.
 */
export function introspectJwtAccessToken({ issuer, db, cache, documents }: Dependencies): JwtAnswer {
  const findApplicationClient = findClient(db, cache);

  /** The application still exists; a client named by a URL may still be one here (nothing is fetched). */
  const clientMayAct = async (clientId: string) =>
    isUrlClientId(clientId) ? documents.accepts(clientId) : Boolean(await findApplicationClient(clientId));

  async function holderMayAct(claims: AccessTokenClaims): Promise<boolean> {
    if (!(await clientMayAct(claims.client_id))) {
      return false;
    }
    return isApplicationToken(claims) || (await userStanding(db, cache, claims.sub)) === 'active';
  }

  async function activeClaims(token: string): Promise<AccessTokenClaims | undefined> {
    try {
      const claims = await verifyAccessToken(db, cache, issuer, token);
      return (await holderMayAct(claims)) ? claims : undefined;
    } catch (error) {
      // A refused token is inactive; a failure of ours (the database) is a 500, not a false answer.
      if (error instanceof AccessTokenRefused) {
        return undefined;
      }
      throw error;
    }
  }

  return async function answerIntrospection(ctx: KoaContextWithOIDC): Promise<void> {
    const { oidc } = ctx;
    const claims = await activeClaims(String(oidc.params?.token));
    const allowed = claims && oidc.client && mayIntrospect(oidc.client, claims.client_id);
    ctx.status = 200;
    ctx.body = allowed
      ? { ...claims, active: true, token_type: isDpopBound(claims) ? 'DPoP' : 'Bearer' }
      : { ...inactive };
    ctx.type = 'application/json';
  };
}
