import { errors, type KoaContextWithOIDC, type ResourceServer } from 'oidc-provider';

import { scopesHeldByApplication, scopesHeldByUser } from '../permissions/held-scopes.ts';
import { findResource, findResourceByIndicator, scopeNamesOfResource } from '../resources/queries.ts';
import type { Resource } from '../resources/schemas.ts';
import { managementApi } from '../shared/management-api.ts';
import type { Queryable } from '../storage/database.ts';
import type { SharedCache } from '../storage/shared-cache.ts';
import { organizationsResource, organizationTokens } from './tokens/organization-tokens.ts';

/** Access tokens for API resources are ES256 JWTs (RFC 9068): small and fast to sign and verify. */
export const accessTokenAlgorithm = 'ES256';

/**
 * A resource by its indicator. With `managementApiResource` (this instance's MANAGEMENT_API_RESOURCE),
 * that indicator names the management API whatever indicator the database holds: an instance started
 * on the same database with another ENDPOINT rewrites the stored one, and this instance goes on
 * answering to its own (docs/decisions.md, "Settings and endpoints").
 */
export const findResourceCached =
  (db: Queryable, cache: SharedCache, managementApiResource?: string) =>
  (indicator: string): Promise<Resource | undefined> =>
    indicator === managementApiResource
      ? cache
          .get('resources', `id:${managementApi.resourceId}`, () => findResource(db, managementApi.resourceId))
          .then((resource) => resource && { ...resource, indicator })
      : cache.get('resources', indicator, () => findResourceByIndicator(db, indicator));

export function resourceServerInfo(db: Queryable, cache: SharedCache, managementApiResource: string) {
  const findResourceByIndicatorOrManagement = findResourceCached(db, cache, managementApiResource);
  const organizations = organizationTokens(db);

  /**
   * The scopes the caller may be granted on the resource: for client credentials, those of the
   * application's roles; for a user, those they hold. At the authorization endpoint, before
   * sign-in, every scope of the resource (the consent step narrows them to what the user holds).
   */
  async function grantableScopes(ctx: KoaContextWithOIDC, resource: Resource, clientId: string): Promise<string[]> {
    if (ctx.oidc.params?.grant_type === 'client_credentials') {
      return scopesHeldByApplication(db, cache, clientId, resource.id);
    }
    const accountId = ctx.oidc.account?.accountId ?? ctx.oidc.session?.accountId;
    if (accountId) {
      // With organization_id (an organization's API token): only that organization's roles count.
      return scopesHeldByUser(db, cache, accountId, resource.id, organizations.organizationIdOf(ctx));
    }
    return cache.get('resources', `scopes:${resource.id}`, () => scopeNamesOfResource(db, resource.id));
  }

  return async (ctx: KoaContextWithOIDC, indicator: string, client: { clientId: string }): Promise<ResourceServer> => {
    if (indicator === organizationsResource) {
      const organization = await organizations.resourceServer(
        ctx,
        ctx.oidc.account?.accountId ?? ctx.oidc.session?.accountId,
      );
      return { ...organization, accessTokenFormat: 'jwt', jwt: { sign: { alg: accessTokenAlgorithm } } };
    }
    const resource = await findResourceByIndicatorOrManagement(indicator);
    if (!resource) {
      throw new errors.InvalidTarget(`resource indicator ${indicator} is not a known API resource`);
    }
    return {
      scope: (await grantableScopes(ctx, resource, client.clientId)).join(' '),
      audience: resource.indicator,
      accessTokenTTL: resource.accessTokenTtl,
      accessTokenFormat: 'jwt',
      jwt: { sign: { alg: accessTokenAlgorithm } },
    };
  };
}
