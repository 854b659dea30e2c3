import { errors, type KoaContextWithOIDC } from 'oidc-provider';

import type { AuditLog } from '../../../audit/audit-log.ts';
import type { Config } from '../../../config/env.ts';
import { scopesHeldByUser } from '../../../permissions/held-scopes.ts';
import type { Resource } from '../../../resources/schemas.ts';
import { managementApi } from '../../../shared/management-api.ts';
import type { Queryable } from '../../../storage/database.ts';
import type { SharedCache } from '../../../storage/shared-cache.ts';
import { userStanding } from '../../../users/queries.ts';
import { oidcScopes } from '../../account.ts';
import { consumeImpersonationToken } from '../../impersonation/subject-token-queries.ts';
import {
  organizationAudience,
  organizationScopesHeld,
  organizationTokens,
  organizationTokenTtl,
} from '../../tokens/organization-tokens.ts';
import { accessTokenType, impersonationTokenType, jwtTokenType, personalAccessTokenType } from '../../urns.ts';
import { assertProofOfKey, dpopProofKey } from '../dpop-binding.ts';
import { applicationLookup, assertFirstPartyConfidential } from '../first-party-client.ts';
import { issueResourceAccessToken, issueUserinfoAccessToken } from '../resource-access-token.ts';
import { delegationClientClaim } from '../token-facts.ts';
import { type Actor, actorTokenParameter, resolveActor } from './actor-token.ts';
import { actorChain, assertDelegationPolicy, assertMayAct, delegatedAct } from './delegation-policy.ts';
import { exchangeTarget, requestedTokenType } from './exchange-audience.ts';
import { exchangedLifetime } from './exchange-lifetime.ts';
import { outsideSubjectResolver } from './outside-subject-token.ts';
import { resolveSubject, type Subject } from './subject-token.ts';

export const tokenExchangeParameters = [
  'subject_token',
  'subject_token_type',
  'actor_token',
  'actor_token_type',
  'resource',
  'audience',
  'scope',
  'requested_token_type',
  'organization_id',
];
/** RFC 8693 §2.1: `audience` may be repeated (every other parameter only once). */
export const tokenExchangeRepeatableParameters = ['audience'];
export const tokenExchangeLogKey = 'ExchangeTokenBy.TokenExchange';

type Dependencies = { config: Config; db: Queryable; cache: SharedCache; audit: AuditLog };

type Audience = { indicator: string; accessTokenTtl: number };
type Target =
  | { kind: 'resource'; resource: Resource; audience: Audience }
  | { kind: 'organization'; organizationId: string; audience: Audience }
  | { kind: 'userinfo'; audience: Audience };

/** The lifetime of a userinfo token an exchange issues: Logto's hour, as an organization token's. */
const userinfoTokenTtl = 3600;
/** What a token for userinfo may carry: the provider's own scopes, less `offline_access` (no refresh token comes of an exchange). */
const userinfoScopes = oidcScopes.filter((scope) => scope !== 'offline_access');

const asString = (value: unknown) => (typeof value === 'string' ? value : undefined);

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

/** The `act` a subject brings: its token's chain, or the impersonating application. */
const actOfSubject = (subject: Subject) =>
  subject.facts?.act ?? (subject.actor === undefined ? undefined : { sub: subject.actor });

/**
 * The checks, in the contract's order (client authentication ran before): the application may
 * exchange; the subject token (and the actor token, when one acts) is present, of a known type,
 * valid, for an active user, proven by the DPoP key it is bound to; the actor is one the subject
 * token and its application's delegation policy allow, within the chain's depth; the resource is
 * a known API. Issued scopes are the requested ones the user holds on that resource; the token
 * ends no later than the tokens it came from.
 */
export function tokenExchangeGrant({ config, db, cache, audit }: Dependencies) {
  const findTarget = exchangeTarget(db, cache);
  const organizations = organizationTokens(db);

  /**
   * What the exchanged token is for: the API resource `resource`/`audience` name; else, with
   * `organization_id`, that organization (Logto's organization token); else, for Logto's own kinds
   * of subject token (an impersonation or a personal access token), the provider's userinfo (Logto's
   * default audience). A user's access token names its API: without one it is 400 `invalid_target`.
   */
  async function targetOf(
    params: Record<string, unknown> | undefined,
    subject: Subject,
    subjectTokenType: string,
  ): Promise<Target> {
    const organizationId = asString(params?.organization_id) || undefined;
    const named = Boolean(asString(params?.resource)) || params?.audience !== undefined;
    if (organizationId && named) {
      throw new errors.InvalidRequest(
        "organization_id names the token's audience (the organization): send it without resource or audience",
      );
    }
    if (organizationId) {
      return {
        kind: 'organization',
        organizationId,
        audience: { indicator: organizationAudience(organizationId), accessTokenTtl: organizationTokenTtl },
      };
    }
    if (!named && (subject.impersonationTokenId || subjectTokenType === personalAccessTokenType)) {
      return { kind: 'userinfo', audience: { indicator: 'userinfo', accessTokenTtl: userinfoTokenTtl } };
    }
    const resource = await findTarget(params);
    assertExchangeTarget(resource);
    return { kind: 'resource', resource, audience: resource };
  }

  /** The scopes the user holds where the token goes; an organization's, after checking they may hold its token. */
  async function heldFor(ctx: KoaContextWithOIDC, target: Target, userId: string): Promise<string[]> {
    if (target.kind === 'resource') {
      return scopesHeldByUser(db, cache, userId, target.resource.id);
    }
    if (target.kind === 'organization') {
      await organizations.assertMayHold(ctx, userId, target.organizationId);
      return organizationScopesHeld(db, userId, target.organizationId);
    }
    return userinfoScopes;
  }

  const applicationOf = applicationLookup(db, cache);
  const resolveOutsideSubject = outsideSubjectResolver({ config, db, cache });

  return async function tokenExchange(ctx: KoaContextWithOIDC): Promise<void> {
    const { params, provider } = ctx.oidc;
    const client = ctx.oidc.client;
    if (!client) {
      // oidc-provider authenticates the client before it calls a grant.
      throw new Error('token exchange ran without an authenticated client');
    }
    const notAllowed = 'token exchange is not allowed for this application';
    const application = assertFirstPartyConfidential(await applicationOf(client.clientId), notAllowed);
    if (!application.customClientMetadata.allowTokenExchange) {
      throw new errors.UnauthorizedClient(notAllowed);
    }

    const subjectToken = asString(params?.subject_token);
    const subjectTokenType = asString(params?.subject_token_type);
    if (!subjectToken) {
      throw new errors.InvalidRequest("missing required parameter 'subject_token'");
    }
    if (!subjectTokenType) {
      throw new errors.InvalidRequest("missing required parameter 'subject_token_type'");
    }
    if (![accessTokenType, impersonationTokenType, jwtTokenType, personalAccessTokenType].includes(subjectTokenType)) {
      throw new errors.InvalidRequest('unsupported subject_token_type');
    }
    const actorToken = actorTokenParameter(params);
    const issuedTokenType = requestedTokenType(params?.requested_token_type) ?? accessTokenType;
    const proofKey = await dpopProofKey(ctx);

    const subject =
      (await resolveOutsideSubject(ctx, subjectToken, subjectTokenType)) ??
      (await resolveSubject(provider, db, cache, config.issuer, subjectToken, subjectTokenType));
    // A user made just in time is made last, once every check passed; until then it does not exist.
    const standing = 'id' in subject.user ? await userStanding(db, cache, subject.user.id) : 'active';
    if (standing !== 'active') {
      throw new errors.InvalidRequest(
        standing === 'deleted' ? 'the subject user does not exist (deleted)' : 'the subject user is suspended',
      );
    }
    assertProofOfKey('subject_token', subject.facts?.jkt, proofKey);

    let actor: Actor | undefined;
    if (actorToken) {
      actor = await resolveActor(provider, db, cache, config.issuer, actorToken);
      assertProofOfKey('actor_token', actor.facts.jkt, proofKey);
      assertMayAct(subject.facts?.mayAct, actor);
      // The policy of our application that received the token; an outside token's client is not ours.
      if (subject.facts && !('trustedIssuerId' in subject)) {
        assertDelegationPolicy(await applicationOf(subject.facts.delegationClientId ?? subject.facts.clientId), actor);
      }
    }
    // Without an actor the user's token changes hands (to this application, for another API): who may
    // act for the user, and under which application's policy, goes with it.
    const delegation =
      actor || !subject.facts
        ? undefined
        : {
            ...(subject.facts.mayAct && { may_act: subject.facts.mayAct }),
            ...(!('trustedIssuerId' in subject) && {
              [delegationClientClaim]: subject.facts.delegationClientId ?? subject.facts.clientId,
            }),
          };
    const act = delegatedAct(actOfSubject(subject), actor, config.tokenExchange.maxActDepth);

    const target = await targetOf(params, subject, subjectTokenType);

    const userId = 'id' in subject.user ? subject.user.id : await subject.user.make();
    const requested = (asString(params?.scope) ?? '').split(' ').filter(Boolean);
    const held = new Set(await heldFor(ctx, target, userId));
    const scope = [...new Set(requested.filter((name) => held.has(name)))].join(' ');
    const issuedAt = Math.floor(Date.now() / 1000);
    const expiresIn = exchangedLifetime(
      target.audience.accessTokenTtl,
      [
        { parameter: 'subject_token', exp: subject.facts?.exp ?? subject.exp },
        { parameter: 'actor_token', exp: actor?.facts.exp },
      ],
      issuedAt,
    );

    if (subject.impersonationTokenId && !(await consumeImpersonationToken(db, subject.impersonationTokenId))) {
      throw new errors.InvalidRequest('subject_token was already used (an impersonation token is single use)');
    }

    const token = {
      userId,
      gty: 'token_exchange',
      scope,
      lifetime: { issuedAt, expiresIn },
      act,
      delegation,
      proofKey,
    };
    const issued =
      target.kind === 'userinfo'
        ? await issueUserinfoAccessToken(ctx, token)
        : await issueResourceAccessToken(ctx, { ...token, resource: target.audience });

    const audiences = params?.audience;
    audit.record(tokenExchangeLogKey, {
      result: 'Success',
      applicationId: client.clientId,
      userId,
      params: {
        resource: target.audience.indicator,
        subjectTokenType,
        scopesRequested: requested,
        scopesIssued: scope ? scope.split(' ') : [],
        ...(subject.actor && { actor: subject.actor }),
        ...(act && { actorChain: actorChain(act) }),
        ...(audiences !== undefined && { audience: Array.isArray(audiences) ? audiences : [audiences] }),
        ...(proofKey && { dpopBound: true }),
        ...('trustedIssuerId' in subject && { trustedIssuerId: subject.trustedIssuerId }),
      },
    });
    ctx.body = {
      access_token: issued.value,
      issued_token_type: issuedTokenType,
      token_type: issued.tokenType,
      expires_in: issued.expiresIn,
      scope,
    };
  };
}
