import type { Context } from 'koa';
import { z } from 'zod';

import type { Page } from '../../storage/list.ts';

/**
 * `page` and `page_size`, as Logto's lists take them. Without either, a list returns everything
 * (Logto's optional pagination); the total is always in the `Total-Number` header. Strict, and so is
 * every list's query that extends it: a parameter the list does not know is refused (400), never
 * ignored, since a filter that is silently dropped returns the wrong entities.
 */
export const paginationQuery = z.strictObject({
  page: z.coerce.number().int().min(1).optional(),
  page_size: z.coerce.number().int().min(1).max(100).optional(),
});

export function pageOf(query: z.output<typeof paginationQuery>): Page {
  if (query.page === undefined && query.page_size === undefined) {
    return { offset: 0 };
  }
  const size = query.page_size ?? 20;
  return { limit: size, offset: ((query.page ?? 1) - 1) * size };
}

export function setTotal(ctx: Context, total: number): void {
  ctx.set('Total-Number', String(total));
}
