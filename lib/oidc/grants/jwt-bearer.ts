import type { JWTPayload } from 'jose';
import { errors, type KoaContextWithOIDC, type Provider } from 'oidc-provider';

import type { AuditLog } from '../../audit/audit-log.ts';
import type { Config } from '../../config/env.ts';
import type { Logger } from '../../http/logger.ts';
import { scopesHeldByUser } from '../../permissions/held-scopes.ts';
import type { Queryable } from '../../storage/database.ts';
import type { SharedCache } from '../../storage/shared-cache.ts';
import { type OutsideSubject, OutsideTokenRefused, outsideTokens } from '../../trusted-issuers/outside-tokens.ts';
import { userStanding } from '../../users/queries.ts';
import { jwtBearerGrantType } from '../urns.ts';
import { assertProofOfKey, dpopProofKey } from './dpop-binding.ts';
import { applicationLookup, assertFirstPartyConfidential } from './first-party-client.ts';
import { issueResourceAccessToken } from './resource-access-token.ts';
import { exchangeTarget } from './token-exchange/exchange-audience.ts';
import { assertExchangeTarget } from './token-exchange/token-exchange.ts';
import { factsOfOutsideJwt } from './token-facts.ts';

export const jwtBearerParameters = ['assertion', 'resource', 'scope'];
export const jwtBearerLogKey = 'ExchangeTokenBy.JwtBearer';

type Dependencies = { config: Config; db: Queryable; cache: SharedCache; audit: AuditLog };

const asString = (value: unknown) => (typeof value === 'string' ? value : undefined);
/** The provider's InvalidGrant keeps its detail from the client; RFC 7523 §3.1 refusals should say which check failed. */
const invalidGrant = (description: string) =>
  Object.assign(new errors.InvalidGrant(), { error_description: description });
const invalidAssertion = (description: string) => invalidGrant(`assertion ${description}`);

/** RFC 7523 §3 lets the server bound how far ahead an assertion's `exp` lies: an hour, as its §3 example suggests. */
const maxAssertionLifetime = 3600;
/** The clock tolerance of outside tokens (outside-tokens.ts). */
const clockTolerance = 5;

/**
 * RFC 7523 §3's claims beyond the trust policy's checks: a `jti` (used once: see `useOnce`), an
 * `exp` at most an hour ahead (a replay window we can keep the `jti` for), no `iat` in the future.
 */
function assertAssertionClaims(claims: JWTPayload): { jti: string; exp: number } {
  const now = Math.floor(Date.now() / 1000);
  if (typeof claims.jti !== 'string' || claims.jti.length === 0 || claims.jti.length > 256) {
    throw invalidAssertion('has no jti claim: an assertion is used once, by its jti (RFC 7523 §3)');
  }
  const exp = Number(claims.exp);
  if (exp > now + maxAssertionLifetime + clockTolerance) {
    throw invalidAssertion(`expires more than ${maxAssertionLifetime} seconds ahead (exp)`);
  }
  if (typeof claims.iat === 'number' && claims.iat > now + clockTolerance) {
    throw invalidAssertion('was issued in the future (iat)');
  }
  return { jti: claims.jti, exp };
}

/**
 * The assertion is checked as a federated subject token is (its issuer's trust policy: listed
 * application, audience, algorithms, keys, expiry, user mapping, and its DPoP key when bound),
 * refusals being `invalid_grant` (RFC 7523 §3.1); then the resource and scopes as in token exchange.
 * A `DPoP` proof binds the issued token (RFC 9449). No refresh token. Only for confidential
 * first-party applications, as token exchange is; each assertion is granted once (its `jti`,
 * remembered in the database until its `exp`, so on every instance).
 */
export function jwtBearerGrant({ config, db, cache, audit }: Dependencies) {
  const findTarget = exchangeTarget(db, cache);
  const outside = outsideTokens({ config, db, cache });
  const applicationOf = applicationLookup(db, cache);

  return async function jwtBearer(ctx: KoaContextWithOIDC): Promise<void> {
    const { params, client } = ctx.oidc;
    if (!client) {
      // oidc-provider authenticates the client before it calls a grant.
      throw new Error('the JWT bearer grant ran without an authenticated client');
    }
    assertFirstPartyConfidential(
      await applicationOf(client.clientId),
      'the JWT bearer grant is for confidential applications only',
    );
    const assertion = asString(params?.assertion);
    if (!assertion) {
      throw new errors.InvalidRequest("missing required parameter 'assertion'");
    }
    const proofKey = await dpopProofKey(ctx);
    const policy = await outside.policyOf(assertion);
    if (!policy) {
      throw invalidAssertion('must be a JWT of a trusted outside issuer (no trust policy names its issuer)');
    }
    let accepted: OutsideSubject;
    try {
      accepted = await outside.accept(ctx, policy, assertion, client.clientId);
    } catch (error) {
      throw error instanceof OutsideTokenRefused ? invalidAssertion(error.message) : error;
    }
    const { user, claims } = accepted;
    const once = assertAssertionClaims(claims);
    assertProofOfKey('assertion', factsOfOutsideJwt(claims).jkt, proofKey, invalidGrant);
    // A user made just in time is made last, once every check passed.
    const standing = 'id' in user ? await userStanding(db, cache, user.id) : 'active';
    if (standing !== 'active') {
      throw invalidAssertion(standing === 'deleted' ? 'names a user that was deleted' : 'names a suspended user');
    }

    const resource = await findTarget(params);
    assertExchangeTarget(resource);
    // Last of the checks: a refused request does not use the assertion up.
    if (!(await ctx.oidc.provider.ReplayDetection.unique(`jwt-bearer:${policy.issuer}#`, once.jti, once.exp))) {
      throw invalidAssertion('was used already (its jti): an assertion is granted once');
    }
    const userId = 'id' in user ? user.id : await user.make();

    const requested = (asString(params?.scope) ?? '').split(' ').filter(Boolean);
    const held = new Set(await scopesHeldByUser(db, cache, userId, resource.id));
    const scope = [...new Set(requested.filter((name) => held.has(name)))].join(' ');
    const issued = await issueResourceAccessToken(ctx, { userId, gty: 'jwt_bearer', scope, resource, proofKey });

    audit.record(jwtBearerLogKey, {
      result: 'Success',
      applicationId: client.clientId,
      userId,
      params: {
        resource: resource.indicator,
        trustedIssuerId: policy.id,
        scopesRequested: requested,
        scopesIssued: scope ? scope.split(' ') : [],
        ...(proofKey && { dpopBound: true }),
      },
    });
    ctx.body = { access_token: issued.value, token_type: issued.tokenType, expires_in: issued.expiresIn, scope };
  };
}

/**
 * Refused JWT bearer grants are audited too, including those refused before the grant runs (client
 * authentication). A listener must not throw: it would turn the response into a 500.
 */
export function auditJwtBearerFailures(provider: Provider, audit: AuditLog, logger: Logger): void {
  provider.on('grant.error', (ctx, error) => {
    try {
      if (ctx.oidc.params?.grant_type !== jwtBearerGrantType) {
        return;
      }
      const { error: code, error_description: description } = error as { error?: string; error_description?: string };
      const { scope, resource } = ctx.oidc.params;
      audit.record(jwtBearerLogKey, {
        result: 'Error',
        applicationId: ctx.oidc.client?.clientId,
        error: { error: code ?? 'server_error', ...(description && { error_description: description }) },
        params: {
          resource: asString(resource),
          scopesRequested: (asString(scope) ?? '').split(' ').filter(Boolean),
        },
      });
    } catch (auditError) {
      logger.error({ err: auditError }, 'could not audit a refused JWT bearer grant');
    }
  });
}
