import type { Middleware } from 'koa';

import { isForeignKeyViolation, isUniqueViolation } from '../storage/database.ts';
import { RequestError } from './errors.ts';
import type { Logger } from './logger.ts';

type ErrorBody = { code: string; message: string; data?: unknown; details?: unknown };

function toBody(error: unknown): { status: number; body: ErrorBody } {
  if (error instanceof RequestError) {
    return {
      status: error.status,
      body: { code: error.code, message: error.message, data: error.data, details: error.details },
    };
  }
  // Database constraints are the last line against races that a prior check cannot close.
  if (isUniqueViolation(error)) {
    return {
      status: 422,
      body: { code: 'entity.unique_integrity_violation', message: 'The entity already exists or is in use.' },
    };
  }
  if (isForeignKeyViolation(error)) {
    return {
      status: 422,
      body: { code: 'entity.relation_foreign_key_not_found', message: 'A related entity does not exist.' },
    };
  }
  return { status: 500, body: { code: 'unknown', message: 'Internal server error.' } };
}

/** Renders every error of the management and experience APIs as `{code, message, data?, details?}`. */
export function errorHandler(logger: Logger): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (error) {
      const { status, body } = toBody(error);
      if (status >= 500) {
        logger.error({ err: error, path: ctx.path, method: ctx.method }, 'request failed');
      }
      ctx.status = status;
      ctx.body = body;
    }
  };
}
