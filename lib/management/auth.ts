import { createLocalJWKSet, jwtVerify, type JWTPayload } from 'jose';
import type { Knex } from 'knex';
import type { Middleware } from 'koa';

import type { Config } from '../config/env.ts';
import { RequestError } from '../http/errors.ts';
import { currentKeySet, type KeySet } from '../oidc/keys.ts';
import { managementApi } from '../resources/management-api.ts';
import type { SharedCache } from '../storage/shared-cache.ts';

export type ManagementAuth = { clientId?: string; sub?: string };

const verifiers = new WeakMap<KeySet, ReturnType<typeof createLocalJWKSet>>();

/**
 * The management API's front door: a Bearer JWT access token for the management resource, verified
 * locally with our own keys (signature, iss, aud, exp, typ), holding the `all` scope.
 */
export function requireManagementToken(config: Config, db: Knex, cache: SharedCache): Middleware {
  return async (ctx, next) => {
    const header = ctx.get('authorization');
    if (!header) {
      throw new RequestError({ code: 'auth.authorization_header_missing', status: 401 }, 'Authorization header is missing.');
    }
    const [type, token] = header.split(' ');
    if (type?.toLowerCase() !== 'bearer' || !token) {
      throw new RequestError({ code: 'auth.authorization_token_type_not_supported', status: 401 }, 'Authorization type is not supported.');
    }
    const keys = await currentKeySet(db, cache);
    let verifier = verifiers.get(keys);
    if (!verifier) {
      verifier = createLocalJWKSet(keys.publicJwks);
      verifiers.set(keys, verifier);
    }
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, verifier, {
        issuer: config.issuer,
        audience: config.managementApiResource,
        typ: 'at+jwt',
        clockTolerance: 5,
      }));
    } catch {
      throw new RequestError({ code: 'auth.unauthorized', status: 401 }, 'Unauthorized. The token is invalid, expired or not for this API.');
    }
    const scopes = typeof payload.scope === 'string' ? payload.scope.split(' ') : [];
    if (!scopes.includes(managementApi.scopeName)) {
      throw new RequestError({ code: 'auth.forbidden', status: 403 }, `The token lacks the \`${managementApi.scopeName}\` scope.`);
    }
    ctx.state.auth = { clientId: payload.client_id, sub: payload.sub } as ManagementAuth;
    await next();
  };
}
