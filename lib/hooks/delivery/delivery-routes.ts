import { z } from 'zod';

import { pageOf, paginationQuery, setTotal } from '../../http/api/pagination.ts';
import type { Api } from '../../http/api/route.ts';
import type { ServiceContext } from '../../http/context.ts';
import { orNotFound } from '../../http/errors.ts';
import { idParams } from '../../shared/entity-id.ts';
import { findHook } from '../queries.ts';
import { deliveryStatuses, listDeliveries } from './delivery-queries.ts';

const deliverySchema = z.object({
  id: z.string(),
  event: z.string(),
  status: z.enum(deliveryStatuses),
  attempts: z.number(),
  nextAttemptAt: z.number().nullable(),
  lastError: z.string().nullable(),
  createdAt: z.number(),
});

/**
 * The deliveries of a hook and where each stands (beyond Logto, whose recent-logs list attempts
 * only): the console shows when a pending one is retried and offers a resend for failed ones.
 */
export function hookDeliveryRoutes(api: Api, { db }: ServiceContext): void {
  api.add(
    {
      method: 'get',
      path: '/hooks/:id/deliveries',
      summary: 'Deliveries of a hook, newest first (20 a page), optionally of one status, with their next attempt',
      tag: 'Hooks',
      params: idParams,
      query: paginationQuery.extend({ status: z.enum(deliveryStatuses).optional() }),
      response: z.array(deliverySchema),
      errors: [404],
    },
    async ({ params, query }, ctx) => {
      const hook = orNotFound(await findHook(db, params.id), 'hook', params.id);
      const page = pageOf({ page: query.page ?? 1, page_size: query.page_size ?? 20 });
      const { items, total } = await listDeliveries(db, hook.id, query.status, page);
      setTotal(ctx, total);
      return items;
    },
  );
}
