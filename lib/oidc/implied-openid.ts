import type { KoaContextWithOIDC, Provider } from 'oidc-provider';

import { oidcScopes } from './account.ts';

/**
 * An OAuth 2.0 client (an MCP client, most OAuth libraries) asks for API scopes, or for no scope
 * at all: none of the provider's own. oidc-provider then refuses the request once the person has
 * signed in ("no scope was granted", `access_denied`). RFC 6749 §3.3 lets the server process such a
 * request with a default instead: we add `openid` for the sign-in alone and take it out again
 * before the code is issued, so the client gets what it asked for (the API's scopes it holds, maybe
 * none) and no ID token.
 *
 * The parameter records that we added it, in the request's parameters the provider keeps through
 * the interaction and a pushed request; a client cannot set it (a value it sends is dropped).
 */
export const impliedOpenidParam = 'openid_implied';

const providerScopes = new Set(oidcScopes);

const scopesOf = (ctx: KoaContextWithOIDC): string[] =>
  typeof ctx.oidc.params?.scope === 'string' ? ctx.oidc.params.scope.split(' ').filter(Boolean) : [];

/** The extra parameter's validator: it runs on every authorization request once its scope is checked. */
export function impliesOpenid(ctx: KoaContextWithOIDC, value: string | undefined): void {
  const { params } = ctx.oidc;
  // A pushed request (PAR) was read by this same validator when it was pushed.
  if (!params || (value !== undefined && ctx.oidc.entities.PushedAuthorizationRequest)) {
    return;
  }
  params[impliedOpenidParam] = undefined;
  const scopes = scopesOf(ctx);
  if (!scopes.some((scope) => providerScopes.has(scope))) {
    params.scope = ['openid', ...scopes].join(' ');
    params[impliedOpenidParam] = 'true';
  }
}

/** Once the request is granted, before its code: the `openid` we added goes. */
export function dropImpliedOpenid(provider: Provider): void {
  provider.on('authorization.accepted', (ctx) => {
    const params = ctx.oidc.params;
    if (params?.[impliedOpenidParam] === 'true') {
      const scopes = scopesOf(ctx).filter((scope) => scope !== 'openid');
      params.scope = scopes.length > 0 ? scopes.join(' ') : undefined;
    }
  });
}
