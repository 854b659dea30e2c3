import { errors, type KoaContextWithOIDC, type Provider } from 'oidc-provider';
// The one import of oidc-provider's internals (the version is pinned): its refresh token grant and
// the helpers it is bound to, so that `organization_id` joins that grant rather than a copy of it.
import * as refreshTokenGrant from 'oidc-provider/lib/actions/grants/refresh_token.js';
import * as grantHelpers from 'oidc-provider/lib/helpers/grants.js';

import { listFactors } from '../../mfa/queries.ts';
import { organizationIdsOfMember, scopesOfMember } from '../../organizations/members/member-queries.ts';
import { findOrganization } from '../../organizations/queries.ts';
import type { Queryable } from '../../storage/database.ts';
import { organizationsScope } from '../account.ts';
import { policyOf } from '../clients/application-policy.ts';

/** Logto's resource of organization tokens (RFC 0001): asked for at sign-in beside the organizations scope. */
export const organizationsResource = 'urn:logto:resource:organizations';

/** Logto's lifetime of an organization token. */
export const organizationTokenTtl = 3600;

/** An organization token's audience. */
export const organizationAudience = (organizationId: string) => `urn:logto:organization:${organizationId}`;

const organizationIdOf = (ctx: KoaContextWithOIDC): string | undefined => {
  const value = ctx.oidc.params?.organization_id;
  return typeof value === 'string' && value !== '' ? value : undefined;
};

/** Logto answers a refused organization with 403 access_denied. */
function denied(description: string): errors.AccessDenied {
  const error = new errors.AccessDenied(description);
  error.status = 403;
  error.statusCode = 403;
  return error;
}

/**
 * The one place that decides an organization token: who may have one for `organizationId` (a
 * member, through a first-party application, meeting the organization's MFA requirement) and, for
 * the organizations resource, its audience and the organization scopes the member holds there. The
 * refresh token grant uses it here; token exchange may take `organization_id` through it too.
 */
export function organizationTokens(db: Queryable) {
  async function assertMayHold(ctx: KoaContextWithOIDC, userId: string, organizationId: string): Promise<void> {
    if (!(await organizationIdsOfMember(db, 'user', userId)).includes(organizationId)) {
      throw denied('user is not a member of the organization');
    }
    const client = ctx.oidc.client;
    // A third party would need the person's consent to this organization, which the consent page does not ask yet.
    if (!client || policyOf(client).isThirdParty) {
      throw denied('organization access is not granted to the application');
    }
    const organization = await findOrganization(db, organizationId);
    if (organization?.isMfaRequired && !(await hasSecondFactor(db, userId))) {
      throw denied('organization requires MFA but user has no MFA configured');
    }
  }

  /** The organizations resource as a resource server: all organization scopes the user holds, or those of one organization. */
  async function resourceServer(ctx: KoaContextWithOIDC, userId: string | undefined) {
    const organizationId = organizationIdOf(ctx);
    return {
      scope: userId ? (await organizationScopesHeld(db, userId, organizationId)).join(' ') : '',
      audience: organizationId ? organizationAudience(organizationId) : organizationsResource,
      accessTokenTTL: organizationTokenTtl,
    };
  }

  /**
   * The refresh token grant with `organization_id` (Logto's organization token): the refresh token
   * must carry the organizations scope; without `resource` the token is for the organization
   * (its audience `urn:logto:organization:<id>`), with one it is that API's token with the scopes
   * the user holds through that organization's roles.
   */
  function register(provider: Provider): void {
    // As the provider registers its own grants (helpers/initialize_app.js).
    const helpers = Object.fromEntries(
      Object.entries(grantHelpers).map(([name, helper]) => [name, helper.bind(undefined, provider)]),
    );
    const builtIn = (ctx: KoaContextWithOIDC) => refreshTokenGrant.handler(provider, helpers, ctx);
    provider.registerGrantType(
      refreshTokenGrant.grantType,
      async (ctx) => {
        const organizationId = organizationIdOf(ctx);
        if (organizationId) {
          const { params } = ctx.oidc;
          const token = await provider.RefreshToken.find(String(params.refresh_token), { ignoreExpiration: true });
          if (token?.accountId && token.clientId === ctx.oidc.client.clientId) {
            if (!token.scopes.has(organizationsScope)) {
              throw new errors.InsufficientScope('refresh token missing required scope', organizationsScope);
            }
            await assertMayHold(ctx, token.accountId, organizationId);
            params.resource ??= organizationsResource;
          }
        }
        await builtIn(ctx);
      },
      [...refreshTokenGrant.parameters, 'resource', 'organization_id'],
      ['resource'],
    );
  }

  return { resourceServer, register, organizationIdOf, assertMayHold };
}

/** The organization scopes a user holds through their organization roles: in one organization, or in any. */
export async function organizationScopesHeld(
  db: Queryable,
  userId: string,
  organizationId?: string,
): Promise<string[]> {
  const organizations = organizationId ? [organizationId] : await organizationIdsOfMember(db, 'user', userId);
  const scopes = new Set<string>();
  for (const id of organizations) {
    for (const scope of await scopesOfMember(db, id, userId)) {
      scopes.add(scope.name);
    }
  }
  return [...scopes];
}

const hasSecondFactor = async (db: Queryable, userId: string) => (await listFactors(db, userId)).length > 0;
