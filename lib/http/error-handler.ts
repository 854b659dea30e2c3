import { randomBytes } from 'node:crypto';
import type { Middleware } from 'koa';

import { isDatabaseGone, isForeignKeyViolation, isUniqueViolation, isUnstorableText } from '../storage/database.ts';
import { nulRefused } from './body.ts';
import { answerDatabaseGone } from './database-gone.ts';
import { type ErrorCode, errorCodes } from './error-codes.ts';
import { RequestError } from './errors.ts';
import type { Logger } from './logger.ts';

/** The error as the client may see it: one of the catalogue, or nothing (an internal failure). */
function exposed(error: unknown): RequestError | undefined {
  if (error instanceof RequestError) {
    return error;
  }
  // Database constraints are the last line against races that a prior check cannot close.
  if (isUniqueViolation(error)) {
    return new RequestError('entity.unique_integrity_violation');
  }
  if (isForeignKeyViolation(error)) {
    return new RequestError('entity.relation_foreign_key_not_found');
  }
  // Text PostgreSQL cannot hold (U+0000) that reached a query some other way than the body, path or query.
  if (isUnstorableText(error)) {
    return nulRefused('input');
  }
  return undefined;
}

/**
 * Renders every error of the management, experience and account APIs as `{code, message, data?,
 * details?}`. A database that is gone is a 503 `database.unavailable` with `Retry-After`, logged once
 * for the whole outage (lib/health/outage.ts), not here. Any other error outside the catalogue (a
 * bug) is a 500 `unknown` whose body says nothing of what failed, only a `logId` that its log line
 * carries too, for the operator.
 */
export function errorHandler(logger: Logger): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (error) {
      if (isDatabaseGone(error)) {
        answerDatabaseGone(ctx);
        return;
      }
      const known = exposed(error);
      if (known) {
        if (known.status >= 500) {
          logger.error({ err: error, path: ctx.path, method: ctx.method }, 'request failed');
        }
        ctx.status = known.status;
        ctx.body = { code: known.code, message: known.message, data: known.data, details: known.details };
        return;
      }
      const logId = randomBytes(6).toString('base64url');
      logger.error({ err: error, logId, path: ctx.path, method: ctx.method }, 'request failed');
      const { status, message } = errorCodes.unknown;
      ctx.status = status;
      ctx.body = { code: 'unknown' satisfies ErrorCode, message, logId };
    }
  };
}
