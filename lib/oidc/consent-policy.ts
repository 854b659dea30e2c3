import { type Client, type Grant, interactionPolicy, type KoaContextWithOIDC, type UnknownObject } from 'oidc-provider';

import { scopesHeldByUser } from '../permissions/held-scopes.ts';
import type { Queryable } from '../storage/database.ts';
import type { SharedCache } from '../storage/shared-cache.ts';
import { oidcScopes } from './account.ts';
import { policyOf } from './clients/application-policy.ts';
import { consentAllowanceOf, resourceScopeKey } from './consent-scopes/consent-scope-queries.ts';
import { applicationLookup } from './grants/first-party-client.ts';
import { findResourceCached } from './resource-servers.ts';
import { organizationScopesHeld, organizationsResource } from './tokens/organization-tokens.ts';

const providerScopes = new Set(oidcScopes);
/** Asked for by every client, whatever its consent scopes say (as in Logto). */
const reservedScopes = new Set(['openid', 'offline_access']);

const asList = (value: unknown): string[] =>
  Array.isArray(value) ? value.map(String) : typeof value === 'string' ? [value] : [];

type ConsentDeps = { db: Queryable; cache: SharedCache; managementApiResource: string };

/** What a client's grant may hold for a person: the consent page shows it, consent grants it. */
export type Grantable = {
  oidcScopes(requested: string[]): string[];
  /** The asked scopes of the API `indicator` that may be granted; undefined for an unknown API. */
  resourceScopes(indicator: string, requested: string[]): Promise<string[] | undefined>;
};

/**
 * The OpenID scopes asked for, and on each API the asked scopes the user holds (the token endpoint
 * narrows again to what they hold when the token is issued). A registered third-party application
 * gets no more than its user consent scopes (consent-scopes/), as in Logto: `openid` and
 * `offline_access` always, other OpenID scopes and API scopes only those its administrator listed.
 * A client named by a URL has no such list, and is held to what the person holds.
 */
export async function grantable(deps: ConsentDeps, clientId: string, userId: string): Promise<Grantable> {
  const { db, cache, managementApiResource } = deps;
  // Cached as the token endpoint reads it: this runs at every authorization, first party or not.
  const application = await applicationLookup(db, cache)(clientId);
  const allowed = application?.isThirdParty ? await consentAllowanceOf(db, clientId) : undefined;
  return {
    oidcScopes: (requested) =>
      requested.filter(
        (scope) =>
          providerScopes.has(scope) && (!allowed || reservedScopes.has(scope) || allowed.userScopes.has(scope)),
      ),
    async resourceScopes(indicator, requested) {
      const resource = await findResourceCached(db, cache, managementApiResource)(indicator);
      if (resource) {
        const held = new Set(await scopesHeldByUser(db, cache, userId, resource.id));
        return requested.filter(
          (scope) => held.has(scope) && (!allowed || allowed.resourceScopes.has(resourceScopeKey(resource.id, scope))),
        );
      }
      if (indicator === organizationsResource) {
        const held = new Set(await organizationScopesHeld(db, userId));
        return requested.filter((scope) => held.has(scope) && (!allowed || allowed.organizationScopes.has(scope)));
      }
      return undefined;
    },
  };
}

/**
 * What consent grants, on the consent page or on a first-party application's behalf: what
 * `grantable` allows of the request. Returns whether the grant changed.
 */
export async function grantAsked(
  deps: ConsentDeps,
  grant: Grant,
  params: UnknownObject,
  userId: string,
): Promise<boolean> {
  const requested = (typeof params.scope === 'string' ? params.scope : '').split(' ').filter(Boolean);
  const before = JSON.stringify([grant.openid, grant.resources]);
  const allows = await grantable(deps, String(grant.clientId), userId);
  grant.addOIDCScope(allows.oidcScopes(requested).join(' '));
  const resourceScopes = requested.filter((scope) => !providerScopes.has(scope));
  for (const indicator of asList(params.resource)) {
    const scopes = await allows.resourceScopes(indicator, resourceScopes);
    if (scopes) {
      grant.addResourceScope(indicator, scopes.join(' '));
    }
  }
  return JSON.stringify([grant.openid, grant.resources]) !== before;
}

/**
 * Who consents. A first-party application is consented to on the person's behalf, whatever its
 * request says (`prompt=consent`, which Logto's SDK always sends, and a native application's
 * consent prompt, answered at `GET /consent` without a page: experience/consent/consent.ts): as in Logto,
 * which grants first-party applications there. A
 * third-party application (`isThirdParty`, and every client named by a URL: no one registered it)
 * is consented to by the person, on the consent page.
 */
export const isFirstParty = (client: Client): boolean => !policyOf(client).isThirdParty;

/**
 * The provider's `loadExistingGrant`: the grant of this session and client, and for a first-party
 * application, that grant holding what the request asks (saved only when it changed), so that
 * no scope is missing from it.
 */
export const loadGrant =
  (deps: { db: Queryable; cache: SharedCache; managementApiResource: string }) =>
  async (ctx: KoaContextWithOIDC): Promise<Grant | undefined> => {
    const { oidc } = ctx;
    const { client, session } = oidc;
    if (!client || !session) {
      return undefined;
    }
    const grantId = oidc.result?.consent?.grantId ?? session.grantIdFor(client.clientId);
    const existing = grantId ? await oidc.provider.Grant.find(grantId) : undefined;
    const accountId = oidc.account?.accountId;
    if (!accountId || !isFirstParty(client)) {
      return existing;
    }
    const grant = existing ?? new oidc.provider.Grant({ accountId, clientId: client.clientId });
    if ((await grantAsked(deps, grant, oidc.params ?? {}, accountId)) || !existing) {
      await grant.save();
    }
    return grant;
  };

/**
 * oidc-provider's interaction policy, with the consent prompt's check that asks every native
 * application for consent whatever its grant holds answered for first-party ones by `loadGrant`
 * instead (the device flow's user code page then leads straight back). `prompt=consent` still asks:
 * `GET /consent` answers a first party's at once (experience/consent/consent.ts), as Logto does.
 */
export function consentPolicy(): ReturnType<typeof interactionPolicy.base> {
  const policy = interactionPolicy.base();
  const check = policy.get('consent')?.checks.get('native_client_prompt');
  if (!check) {
    throw new Error("oidc-provider's consent prompt has no native_client_prompt check");
  }
  const asks = check.check;
  check.check = (ctx) => (ctx.oidc.client && isFirstParty(ctx.oidc.client) ? false : asks(ctx));
  return policy;
}
