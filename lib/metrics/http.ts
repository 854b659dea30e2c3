import type { Middleware } from 'koa';

import { routeLabel } from '../http/route-label.ts';
import { httpRequests } from './metrics.ts';

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
      httpRequests.observe(
        { method: ctx.method, route: routeLabel(ctx), status: status ?? ctx.status },
        (performance.now() - started) / 1000,
      );
    }
  };
}
