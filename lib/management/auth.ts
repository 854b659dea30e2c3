import type { Knex } from 'knex';
import type { Context, Middleware } from 'koa';

import type { Config } from '../config/env.ts';
import { bearerToken } from '../http/api/bearer.ts';
import { RequestError } from '../http/errors.ts';
import { addressKey, FailureThrottle, retryAfterSeconds } from '../http/failure-throttle.ts';
import { findClient } from '../oidc/clients/clients.ts';
import {
  type AccessTokenClaims,
  AccessTokenRefused,
  audiencesOf,
  isApplicationToken,
  isDpopBound,
  scopesOf,
  verifyAccessToken,
} from '../oidc/tokens/access-tokens.ts';
import { scopesHeldByApplication, scopesHeldByUser } from '../permissions/held-scopes.ts';
import { managementApi, type ManagementAuth } from '../shared/management-api.ts';
import type { SharedCache } from '../storage/shared-cache.ts';
import { userStanding } from '../users/queries.ts';

/**
 * The management API's front door: one Bearer JWT access token of ours for the management
 * resource, holding `all`, whose holder may still act. A token is only as good as its holder: the
 * application it was issued to must still exist, and the user (for an administrator's token) still
 * be active; either must still hold `all` through its roles. These answers come from memory under
 * the cache versions every change bumps, so a change is seen by the next request on every
 * instance, and a request costs no query when nothing changed.
 *
 * A source address that keeps failing (401: no token, a bad one, one whose holder is gone) gets its
 * further failures answered 429 with `Retry-After` for the rest of the window (failure-throttle.ts,
 * the client authentication throttle's window and per-address limit). A valid token is never
 * refused, from that address or any other: the throttle is only asked about failures.
 */
export function requireManagementToken(config: Config, db: Knex, cache: SharedCache): Middleware {
  const findApplicationClient = findClient(db, cache);
  const { windowSeconds, failuresPerAddress } = config.clientAuthThrottle;
  const throttle = new FailureThrottle(db, cache, windowSeconds);

  async function verify(token: string): Promise<AccessTokenClaims> {
    try {
      return await verifyAccessToken(db, cache, config.issuer, token);
    } catch (error) {
      throw error instanceof AccessTokenRefused
        ? new RequestError('auth.unauthorized', { reason: `Unauthorized: the token ${error.message}.` })
        : error;
    }
  }

  /** The scopes the token's holder holds on the management API today. */
  async function heldScopes(claims: AccessTokenClaims): Promise<string[]> {
    if (!(await findApplicationClient(claims.client_id))) {
      throw new RequestError('auth.unauthorized', {
        reason: 'Unauthorized: the application the token was issued to no longer exists.',
      });
    }
    if (isApplicationToken(claims)) {
      return scopesHeldByApplication(db, cache, claims.client_id, managementApi.resourceId);
    }
    const standing = await userStanding(db, cache, claims.sub);
    if (standing !== 'active') {
      throw new RequestError('auth.unauthorized', {
        reason: `Unauthorized: the user the token was issued for is ${standing}.`,
      });
    }
    return scopesHeldByUser(db, cache, claims.sub, managementApi.resourceId);
  }

  /** The token's claims, or the 401 (403) that says why its request is refused. */
  async function authenticate(ctx: Context): Promise<AccessTokenClaims> {
    const claims = await verify(bearerToken(ctx.get('authorization')));
    // RFC 9449 §7.2: a bound token sent as a Bearer token is refused; this API checks no proofs.
    if (isDpopBound(claims)) {
      throw new RequestError('auth.unauthorized', {
        reason: 'Unauthorized: the token is DPoP-bound (cnf.jkt); the management API takes Bearer tokens only.',
      });
    }
    if (!audiencesOf(claims).includes(config.managementApiResource)) {
      throw new RequestError('auth.unauthorized', { reason: 'Unauthorized: the token is not for this API.' });
    }
    if (!scopesOf(claims).includes(managementApi.scopeName)) {
      throw new RequestError('auth.forbidden', { reason: `The token lacks the \`${managementApi.scopeName}\` scope.` });
    }
    if (!(await heldScopes(claims)).includes(managementApi.scopeName)) {
      throw new RequestError('auth.forbidden', {
        reason: `The token's holder no longer holds the \`${managementApi.scopeName}\` scope.`,
      });
    }
    return claims;
  }

  return async (ctx, next) => {
    const claims = await authenticate(ctx).catch(async (error: unknown) => {
      if (error instanceof RequestError && error.status === 401) {
        const until = await throttle.fail(new Map([[`management:${addressKey(ctx.ip)}`, failuresPerAddress]]));
        if (until) {
          ctx.set('Retry-After', retryAfterSeconds(until));
          throw new RequestError('auth.too_many_attempts');
        }
      }
      throw error;
    });
    ctx.state.auth = { clientId: claims.client_id, sub: claims.sub } satisfies ManagementAuth;
    await next();
  };
}
