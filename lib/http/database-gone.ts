import type { Context } from 'koa';

import { type ErrorCode, errorCodes } from './error-codes.ts';

/** Long enough for a restarted server or a failed-over node, short enough that a client soon gets through. */
const retryAfterSeconds = 5;

/**
 * The answer to any request while the database is gone (lib/health/outage.ts), on every path: a
 * JSON error of the catalogue a client can retry after `Retry-After`, never a 500. It says only that
 * the service cannot reach its database, as every instance in that state says it.
 */
export function answerDatabaseGone(ctx: Context): void {
  const code: ErrorCode = 'database.unavailable';
  const { status, message } = errorCodes[code];
  ctx.status = status;
  ctx.set('Retry-After', String(retryAfterSeconds));
  ctx.set('Cache-Control', 'no-store');
  ctx.body = { code, message };
}
