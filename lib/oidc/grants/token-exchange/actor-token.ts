import { errors, type Provider } from 'oidc-provider';

import { findApplication } from '../../../applications/queries.ts';
import type { Queryable } from '../../../storage/database.ts';
import type { SharedCache } from '../../../storage/shared-cache.ts';
import { userStanding } from '../../../users/queries.ts';
import { AccessTokenRefused, isApplicationToken, verifyAccessToken } from '../../tokens/access-tokens.ts';
import { accessTokenType } from '../../urns.ts';
import { factsOfJwt, factsOfOpaque, type TokenFacts } from '../token-facts.ts';

/** The party acting for the subject (RFC 8693 §1.1): a user, or an application by client credentials. */
export type Actor = { sub: string; facts: TokenFacts };

const invalid = (description: string) => new errors.InvalidRequest(`actor_token ${description}`);

/**
 * RFC 8693 §2.1: `actor_token` and `actor_token_type` come together or not at all; undefined when
 * neither is sent (no delegation: the exchange is the plain one).
 */
export function actorTokenParameter(params: { actor_token?: unknown; actor_token_type?: unknown } | undefined) {
  const token = typeof params?.actor_token === 'string' && params.actor_token !== '' ? params.actor_token : undefined;
  const type =
    typeof params?.actor_token_type === 'string' && params.actor_token_type !== ''
      ? params.actor_token_type
      : undefined;
  if (token && !type) {
    throw new errors.InvalidRequest("missing required parameter 'actor_token_type' (actor_token was sent)");
  }
  if (type && !token) {
    throw new errors.InvalidRequest("missing required parameter 'actor_token' (actor_token_type was sent)");
  }
  if (type && type !== accessTokenType) {
    throw new errors.InvalidRequest(`unsupported actor_token_type (only ${accessTokenType})`);
  }
  return token;
}

/**
 * Resolves an actor token: one of our access tokens, JWT or opaque, a user's or an application's
 * (client credentials: a service is the usual actor), valid and unrevoked, its holder still able
 * to act. Every failure is `invalid_request` naming the reason.
 */
export async function resolveActor(
  provider: Provider,
  db: Queryable,
  cache: SharedCache,
  issuer: string,
  token: string,
): Promise<Actor> {
  const actor =
    token.split('.').length === 3 ? await jwtActor(db, cache, issuer, token) : await opaqueActor(provider, token);
  if (actor.sub === actor.facts.clientId) {
    const application = await cache.get('applications', `application:${actor.sub}`, () =>
      findApplication(db, actor.sub),
    );
    if (!application) {
      throw invalid('was issued to an application that no longer exists');
    }
  } else {
    const standing = await userStanding(db, cache, actor.sub);
    if (standing !== 'active') {
      throw invalid(`speaks for a user who is ${standing}`);
    }
  }
  return actor;
}

async function jwtActor(db: Queryable, cache: SharedCache, issuer: string, token: string): Promise<Actor> {
  try {
    const claims = await verifyAccessToken(db, cache, issuer, token);
    return { sub: isApplicationToken(claims) ? claims.client_id : claims.sub, facts: factsOfJwt(claims) };
  } catch (error) {
    throw error instanceof AccessTokenRefused ? invalid(error.message) : error;
  }
}

async function opaqueActor(provider: Provider, token: string): Promise<Actor> {
  const user = await provider.AccessToken.find(token);
  if (user) {
    return { sub: user.accountId, facts: factsOfOpaque(user) };
  }
  const application = await provider.ClientCredentials.find(token);
  if (application?.clientId) {
    return { sub: application.clientId, facts: factsOfOpaque(application) };
  }
  throw invalid('is invalid, expired or revoked');
}
