import type Koa from 'koa';
import mount from 'koa-mount';

import { currentKeySet } from './keys.ts';
import { createProvider, type OidcDependencies } from './provider.ts';

/**
 * Serves oidc-provider under /oidc. The provider holds its keys from construction, so when the
 * `keys` cache version moves (a rotation, here or in another instance) the next request builds a
 * new one; all provider state is in the database, so nothing is lost.
 */
export function oidcRoutes(app: Koa, deps: OidcDependencies): Koa.Middleware {
  let built: { keysVersion: number | undefined; handler: Promise<Koa.Middleware> } | undefined;

  async function build(): Promise<Koa.Middleware> {
    const keys = await currentKeySet(deps.db, deps.cache);
    // The outer app reads and writes the provider's cookies, so both must sign with the same keys.
    app.keys = keys.cookieKeys;
    return mount('/oidc', createProvider(deps, keys));
  }

  function current(): Promise<Koa.Middleware> {
    const keysVersion = deps.cache.version('keys');
    if (!built || built.keysVersion !== keysVersion) {
      const handler = build();
      built = { keysVersion, handler };
      handler.catch(() => (built = undefined));
    }
    return built.handler;
  }

  return async (ctx, next) => {
    if (ctx.path !== '/oidc' && !ctx.path.startsWith('/oidc/')) {
      return next();
    }
    const handler = await current();
    return handler(ctx, next);
  };
}
