import { type Client, type Grant, interactionPolicy, type KoaContextWithOIDC, type UnknownObject } from 'oidc-provider';

import { scopesHeldByUser } from '../permissions/held-scopes.ts';
import type { Queryable } from '../storage/database.ts';
import type { SharedCache } from '../storage/shared-cache.ts';
import { oidcScopes } from './account.ts';
import { policyOf } from './clients/application-policy.ts';
import { findResourceCached } from './resource-servers.ts';
import { organizationScopesHeld, organizationsResource } from './tokens/organization-tokens.ts';

const providerScopes = new Set(oidcScopes);

const asList = (value: unknown): string[] =>
  Array.isArray(value) ? value.map(String) : typeof value === 'string' ? [value] : [];

/**
 * What consent grants, on the consent page or on a first-party application's behalf: the OpenID
 * scopes asked for, and on each requested API resource the asked scopes the user holds (the token
 * endpoint narrows again to what they hold when the token is issued). Returns whether the grant
 * changed.
 */
export async function grantAsked(
  { db, cache, managementApiResource }: { db: Queryable; cache: SharedCache; managementApiResource: string },
  grant: Grant,
  params: UnknownObject,
  userId: string,
): Promise<boolean> {
  const requested = (typeof params.scope === 'string' ? params.scope : '').split(' ').filter(Boolean);
  const before = JSON.stringify([grant.openid, grant.resources]);
  grant.addOIDCScope(requested.filter((scope) => providerScopes.has(scope)).join(' '));
  const resourceScopes = requested.filter((scope) => !providerScopes.has(scope));
  for (const indicator of asList(params.resource)) {
    const resource = await findResourceCached(db, cache, managementApiResource)(indicator);
    const held = resource
      ? new Set(await scopesHeldByUser(db, cache, userId, resource.id))
      : indicator === organizationsResource
        ? new Set(await organizationScopesHeld(db, userId))
        : undefined;
    if (held) {
      grant.addResourceScope(indicator, resourceScopes.filter((scope) => held.has(scope)).join(' '));
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
