import type { Middleware } from 'koa';

import { RequestError } from '../errors.ts';

const safeMethods = new Set(['GET', 'HEAD', 'OPTIONS']);
/** `none`: the person typed the address or used a bookmark; not another site's doing. */
const ownSite = new Set(['same-origin', 'none']);

/**
 * Requests that change state on the strength of a cookie (the browser sends it whoever asks) must
 * come from the service's own pages: a browser names the page's origin in `Origin` and how it
 * relates to the target in `Sec-Fetch-Site`. Either one naming another site gives 403
 * `request.cross_site_forbidden`. A request with neither is not a browser's cross-site request (a
 * script, curl) and passes; bearer-authenticated APIs are not behind this check (the route groups
 * that act on a cookie or on the browser's address put it ahead of their routes, lib/api.ts).
 */
export function refuseCrossSite(endpoint: string): Middleware {
  const ownOrigin = new URL(endpoint).origin;
  return async (ctx, next) => {
    if (!safeMethods.has(ctx.method)) {
      const origin = ctx.get('origin');
      const site = ctx.get('sec-fetch-site');
      if ((origin !== '' && origin !== ownOrigin) || (site !== '' && !ownSite.has(site))) {
        throw new RequestError('request.cross_site_forbidden');
      }
    }
    await next();
  };
}
