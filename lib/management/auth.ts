import type { Knex } from 'knex';
import type { Middleware } from 'koa';

import type { Config } from '../config/env.ts';
import { bearerToken } from '../http/bearer.ts';
import { RequestError } from '../http/errors.ts';
import {
  AccessTokenRefused,
  audiencesOf,
  isApplicationToken,
  isDpopBound,
  scopesOf,
  verifyAccessToken,
  type AccessTokenClaims,
} from '../oidc/access-tokens.ts';
import { findClient } from '../oidc/clients.ts';
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
 */
export function requireManagementToken(config: Config, db: Knex, cache: SharedCache): Middleware {
  const findApplicationClient = findClient(db, cache);

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

  return async (ctx, next) => {
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
    ctx.state.auth = { clientId: claims.client_id, sub: claims.sub } satisfies ManagementAuth;
    await next();
  };
}
