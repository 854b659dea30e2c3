import type { Context, Middleware, Next } from 'koa';

import type { ReadinessCheck } from './readiness.ts';

/**
 * Kubernetes' probes, open to anyone (they say nothing an outsider could use, and a check costs one
 * small query shared by every probe in flight): `/health/live` answers 200 while the process serves
 * HTTP; `/health/ready` 200 when this instance should get traffic, else 503 with the reason.
 */
export function healthRoutes(readiness: ReadinessCheck): Middleware {
  // Not async itself: every other request passes straight through, without a promise of its own.
  return (ctx, next) => {
    if ((ctx.method !== 'GET' && ctx.method !== 'HEAD') || !ctx.path.startsWith('/health/')) {
      return next();
    }
    return answerProbe(readiness, ctx, next);
  };
}

async function answerProbe(readiness: ReadinessCheck, ctx: Context, next: Next): Promise<void> {
  if (ctx.path === '/health/live') {
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { status: 'ok' };
    return;
  }
  if (ctx.path !== '/health/ready') {
    await next();
    return;
  }
  const answer = await readiness.check();
  ctx.set('Cache-Control', 'no-store');
  if (answer.ready) {
    ctx.body = { status: 'ok' };
    return;
  }
  ctx.status = 503;
  ctx.body = { status: 'unavailable', reason: answer.reason, message: answer.message };
}
