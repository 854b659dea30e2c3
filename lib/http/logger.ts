import { randomUUID } from 'node:crypto';

import type { Middleware } from 'koa';
import { pino, type Logger } from 'pino';

import type { Config } from '../config/env.ts';

export type { Logger } from 'pino';

/**
 * JSON lines in production, written in the background (a request never waits on stdout);
 * human-readable lines in development.
 */
export function createLogger(config: Pick<Config, 'production' | 'logLevel'>): Logger {
  if (config.production || config.logLevel === 'silent') {
    return pino({ level: config.logLevel, base: undefined }, pino.destination({ sync: false }));
  }
  return pino({
    level: config.logLevel,
    base: undefined,
    transport: { target: 'pino-pretty', options: { ignore: 'pid,hostname', translateTime: 'SYS:HH:MM:ss.l' } },
  });
}

/** One line per request. Only the path is logged: query strings may carry codes and tokens. */
export function requestLogger(logger: Logger): Middleware {
  return async (ctx, next) => {
    const started = performance.now();
    const requestId = ctx.get('x-request-id') || randomUUID();
    ctx.set('x-request-id', requestId);
    try {
      await next();
    } finally {
      logger.info(
        {
          requestId,
          method: ctx.method,
          path: ctx.path,
          status: ctx.status,
          ms: Math.round((performance.now() - started) * 10) / 10,
        },
        'request',
      );
    }
  };
}
