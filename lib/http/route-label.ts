import type { Context } from 'koa';

/** Where a request went outside the routers: pages, assets, probes (a fixed set, like the routes). */
const exactPaths = new Set([
  '/',
  '/sign-in',
  '/register',
  '/reset-password',
  '/callback',
  '/health/live',
  '/health/ready',
  '/metrics',
]);
const areas = ['/console', '/experience-assets', '/callback', '/oidc', '/api'].map((prefix) => ({
  prefix: `${prefix}/`,
  label: `${prefix}/*`,
}));

/** oidc-provider matches under its mount point: `/token` is `/oidc/token`. Route patterns are few, so each label is made once. */
const oidcLabels = new Map<string, string>();

/**
 * The route pattern a request matched (`/api/users/:userId`, `/oidc/token`), never its raw path:
 * a label per distinct path would let any client grow the metrics without bound.
 */
export function routeLabel(ctx: Context): string {
  const matched = (ctx as Context & { _matchedRoute?: unknown })._matchedRoute;
  if (typeof matched === 'string') {
    if (!ctx.path.startsWith('/oidc/')) {
      return matched;
    }
    let label = oidcLabels.get(matched);
    if (label === undefined) {
      label = `/oidc${matched}`;
      oidcLabels.set(matched, label);
    }
    return label;
  }
  if (exactPaths.has(ctx.path)) {
    return ctx.path;
  }
  return areas.find((area) => ctx.path.startsWith(area.prefix))?.label ?? 'other';
}
