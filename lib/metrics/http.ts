import type { Context, Middleware } from 'koa';

import { httpRequests } from './metrics.ts';

/** Where a request went outside the routers: pages, assets, probes (a fixed set, like the routes). */
const exactPaths = new Set(['/', '/sign-in', '/register', '/reset-password', '/callback', '/health/live', '/health/ready', '/metrics']);
const areas = ['/console', '/experience-assets', '/callback', '/oidc', '/api'].map((prefix) => ({ prefix: `${prefix}/`, label: `${prefix}/*` }));

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

const statusOf = (error: unknown) => {
  const status = (error as { status?: unknown } | undefined)?.status;
  return typeof status === 'number' && status >= 400 && status < 600 ? status : 500;
};

/** Counts every request by method, route pattern and status, with its duration. */
export function httpMetrics(): Middleware {
  return async (ctx, next) => {
    const started = performance.now();
    let status: number | undefined;
    try {
      await next();
    } catch (error) {
      // Koa answers an error that got this far after this middleware: count what it will send.
      status = statusOf(error);
      throw error;
    } finally {
      httpRequests.observe({ method: ctx.method, route: routeLabel(ctx), status: status ?? ctx.status }, (performance.now() - started) / 1000);
    }
  };
}
