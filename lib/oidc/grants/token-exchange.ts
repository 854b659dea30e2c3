import { errors, type KoaContextWithOIDC } from 'oidc-provider';

import type { AuditLog } from '../../audit/audit-log.ts';
import { findApplication } from '../../applications/queries.ts';
import { confidentialTypes } from '../../applications/schemas.ts';
import type { Config } from '../../config/env.ts';
import { scopesHeldByUser } from '../../permissions/held-scopes.ts';
import { managementApi } from '../../shared/management-api.ts';
import type { Resource } from '../../resources/schemas.ts';
import type { Queryable } from '../../storage/database.ts';
import type { SharedCache } from '../../storage/shared-cache.ts';
import { userStanding } from '../../users/queries.ts';
import { accessTokenAlgorithm, findResourceCached } from '../resource-servers.ts';
import { consumeImpersonationToken } from '../subject-token-queries.ts';
import { jwtTokenType, outsideSubjectResolver } from './outside-subject-token.ts';
import { accessTokenType, impersonationTokenType, resolveSubject } from './subject-token.ts';

/** RFC 8693 token exchange: API A swaps a user's token for one whose audience is API B. */
export const tokenExchangeGrantType = 'urn:ietf:params:oauth:grant-type:token-exchange';
export const tokenExchangeParameters = ['subject_token', 'subject_token_type', 'resource', 'scope'];
export const tokenExchangeLogKey = 'ExchangeTokenBy.TokenExchange';

type Dependencies = { config: Config; db: Queryable; cache: SharedCache; audit: AuditLog };

const asString = (value: unknown) => (typeof value === 'string' ? value : undefined);

export function assertResourceForm(resource: string | undefined): string {
  if (!resource) {
    throw new errors.InvalidTarget('resource is required: the API resource indicator of the downstream API');
  }
  if (!URL.canParse(resource) || resource.includes('#')) {
    throw new errors.InvalidTarget('resource must be an absolute URI without a fragment (RFC 8707)');
  }
  return resource;
}

/**
 * Exchange must not climb: a token for API A never becomes one for the management API, whatever
 * the user holds (administrators sign in at the console for that), nor for a resource its owner
 * closed to exchange.
 */
export function assertExchangeTarget(resource: Resource): void {
  if (resource.id === managementApi.resourceId) {
    throw new errors.InvalidTarget(
      `resource ${resource.indicator} is the management API, never a token exchange target (its tokens come from client credentials or an administrator's own sign-in)`,
    );
  }
  if (!resource.isExchangeTarget) {
    throw new errors.InvalidTarget(
      `resource ${resource.indicator} is not a token exchange target (isExchangeTarget is false)`,
    );
  }
}

/**
 * The checks, in the contract's order (client authentication ran before): the application may
 * exchange; the subject token is present, of a known type, valid, for an active user; the resource
 * is a known API. Issued scopes are the requested ones the user holds on that resource.
 */
export function tokenExchangeGrant({ config, db, cache, audit }: Dependencies) {
  const findResource = findResourceCached(db, cache);
  const resolveOutsideSubject = outsideSubjectResolver({ config, db, cache });

  return async function tokenExchange(ctx: KoaContextWithOIDC): Promise<void> {
    const { params, provider } = ctx.oidc;
    const client = ctx.oidc.client;
    if (!client) {
      // oidc-provider authenticates the client before it calls a grant.
      throw new Error('token exchange ran without an authenticated client');
    }
    const application = await cache.get('applications', `application:${client.clientId}`, () =>
      findApplication(db, client.clientId),
    );
    // Token exchange involves no consent, so it is for the tenant's own applications only (as in
    // Logto, whose words these are); the management API refuses to switch it on for a third party.
    if (application?.isThirdParty) {
      throw new errors.UnauthorizedClient('third-party applications are not allowed for this grant type');
    }
    if (
      !application ||
      !confidentialTypes.has(application.type) ||
      !application.customClientMetadata.allowTokenExchange
    ) {
      throw new errors.UnauthorizedClient('token exchange is not allowed for this application');
    }

    const subjectToken = asString(params?.subject_token);
    const subjectTokenType = asString(params?.subject_token_type);
    if (!subjectToken) {
      throw new errors.InvalidRequest("missing required parameter 'subject_token'");
    }
    if (!subjectTokenType) {
      throw new errors.InvalidRequest("missing required parameter 'subject_token_type'");
    }
    if (![accessTokenType, impersonationTokenType, jwtTokenType].includes(subjectTokenType)) {
      throw new errors.InvalidRequest('unsupported subject_token_type');
    }

    const subject =
      (await resolveOutsideSubject(ctx, subjectToken, subjectTokenType)) ??
      (await resolveSubject(provider, db, cache, config.issuer, subjectToken, subjectTokenType));
    const standing = await userStanding(db, cache, subject.userId);
    if (standing !== 'active') {
      throw new errors.InvalidRequest(
        standing === 'deleted' ? 'the subject user does not exist (deleted)' : 'the subject user is suspended',
      );
    }
    const user = { id: subject.userId };

    const indicator = assertResourceForm(asString(params?.resource));
    const resource = await findResource(indicator);
    if (!resource) {
      throw new errors.InvalidTarget(`resource ${indicator} is not a known API resource`);
    }
    assertExchangeTarget(resource);

    const requested = (asString(params?.scope) ?? '').split(' ').filter(Boolean);
    const held = new Set(await scopesHeldByUser(db, cache, user.id, resource.id));
    const scope = [...new Set(requested.filter((name) => held.has(name)))].join(' ');

    if (subject.impersonationTokenId && !(await consumeImpersonationToken(db, subject.impersonationTokenId))) {
      throw new errors.InvalidRequest('subject_token was already used (an impersonation token is single use)');
    }

    // No grant row: a JWT access token is self-contained, and storing a grant per exchange would
    // put a write on the hot path (the types ask for one; the JWT format does not use it).
    const token = new provider.AccessToken({
      accountId: user.id,
      client,
      gty: 'token_exchange',
      scope: scope || undefined,
      ...(subject.actor && { extra: { act: { sub: subject.actor } } }),
    } as ConstructorParameters<typeof provider.AccessToken>[0]);
    token.resourceServer = new provider.ResourceServer(resource.indicator, {
      scope,
      audience: resource.indicator,
      accessTokenTTL: resource.accessTokenTtl,
      accessTokenFormat: 'jwt',
      jwt: { sign: { alg: accessTokenAlgorithm } },
    });
    ctx.oidc.entity('AccessToken', token);
    const value = await token.save();

    audit.record(tokenExchangeLogKey, {
      result: 'Success',
      applicationId: client.clientId,
      userId: user.id,
      params: {
        resource: indicator,
        subjectTokenType,
        scopesRequested: requested,
        scopesIssued: scope ? scope.split(' ') : [],
        ...(subject.actor && { actor: subject.actor }),
      },
    });
    ctx.body = {
      access_token: value,
      issued_token_type: accessTokenType,
      token_type: 'Bearer',
      expires_in: token.expiration,
      scope,
    };
  };
}
