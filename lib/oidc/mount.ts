import type Koa from 'koa';
import mount from 'koa-mount';
import type { Provider } from 'oidc-provider';

import { metadataPaths, serveMetadata } from './authorization-server-metadata.ts';
import { ClientIdMetadataDocuments } from './client-id-metadata/documents.ts';
import { formPostEndpoints, redirectFormPost } from './form-post.ts';
import { currentKeySet } from './keys/keys.ts';
import { createProvider, type OidcDependencies } from './provider.ts';
import { askConsentForOfflineAccess } from './tokens/offline-access.ts';

export type OidcService = {
  /** Serves /oidc. */
  routes: Koa.Middleware;
  /** The provider of the current key set (the experience API reads interactions through it). */
  provider(): Promise<Provider>;
  /** Clients named by a URL, as their metadata documents describe them (the consent page shows them). */
  documents: ClientIdMetadataDocuments;
};

/**
 * oidc-provider under /oidc. The provider holds its keys from construction, so when the `keys`
 * cache version moves (a rotation, here or in another instance) the next request builds a new one;
 * all provider state is in the database, so nothing is lost.
 */
export function createOidcService(app: Koa, deps: OidcDependencies): OidcService {
  const documents = new ClientIdMetadataDocuments(
    { ...deps.config.clientIdMetadataDocuments, allowPrivateTargets: deps.config.hooksAllowPrivateTargets },
    deps.logger,
  );
  let built:
    { keysVersion: number | undefined; provider: Promise<{ provider: Provider; handler: Koa.Middleware }> } | undefined;

  async function build() {
    const keys = await currentKeySet(deps.db, deps.cache);
    // The outer app reads and writes the provider's cookies, so both must sign with the same keys.
    app.keys = keys.cookieKeys;
    const provider = createProvider(deps, keys, documents);
    return { provider, handler: mount('/oidc', provider) };
  }

  function current() {
    const keysVersion = deps.cache.version('keys');
    if (!built || built.keysVersion !== keysVersion) {
      const provider = build();
      built = { keysVersion, provider };
      provider.catch(() => (built = undefined));
    }
    return built.provider;
  }

  return {
    routes: async (ctx, next) => {
      const metadata = ctx.method === 'GET' ? metadataPaths.get(ctx.path) : undefined;
      if (metadata) {
        return serveMetadata(ctx, (await current()).handler, metadata);
      }
      if (ctx.path !== '/oidc' && !ctx.path.startsWith('/oidc/')) {
        await next();
        return;
      }
      if (ctx.method === 'POST' && formPostEndpoints.has(ctx.path)) {
        return redirectFormPost(ctx);
      }
      askConsentForOfflineAccess(ctx);
      const { handler } = await current();
      await handler(ctx, next);
    },
    provider: async () => (await current()).provider,
    documents,
  };
}
