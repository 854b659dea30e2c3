import { z } from 'zod';

import type { Api } from '../http/api/route.ts';
import type { ServiceContext } from '../http/context.ts';
import { readDashboard } from './queries.ts';

const pair = z.object({ success: z.number(), failure: z.number() });

const dashboardSchema = z.object({
  since: z.number(),
  days: z.array(
    z.object({
      day: z.number(),
      signIns: z.number(),
      registrations: z.number(),
      tokenExchanges: pair,
      webhookDeliveries: pair,
    }),
  ),
  webhookLatencyP50Ms: z.number().nullable(),
});

export function dashboardRoutes(api: Api, { db }: ServiceContext): void {
  api.add(
    {
      method: 'get',
      path: '/dashboard',
      summary:
        'Daily counts (UTC days) of sign-ins, registrations, token exchanges and webhook deliveries, with the median delivery time',
      tag: 'Dashboard',
      query: z.object({ days: z.enum(['7', '30']).default('7').transform(Number) }),
      response: dashboardSchema,
    },
    async ({ query }) => readDashboard(db, query.days),
  );
}
