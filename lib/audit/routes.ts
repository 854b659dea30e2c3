import type { Knex } from 'knex';
import { z } from 'zod';

import { tenantId } from '../applications/queries.ts';
import { RequestError, notFound } from '../http/errors.ts';
import { pageOf, paginationQuery, setTotal } from '../http/pagination.ts';
import type { Api } from '../http/route.ts';
import { listPage } from '../storage/list.ts';

const tag = 'Audit logs';
const logSchema = z.object({
  tenantId: z.string(),
  id: z.string(),
  key: z.string(),
  payload: z.record(z.string(), z.unknown()),
  createdAt: z.number(),
});

type Row = { id: string; key: string; payload: string; created_at: number };
const toLog = (row: Row) => ({
  tenantId,
  id: row.id,
  key: row.key,
  payload: JSON.parse(row.payload) as Record<string, unknown>,
  createdAt: Number(row.created_at),
});

const millis = z.coerce.number().int().min(0);

export function auditLogRoutes(api: Api, db: Knex): void {
  api.add(
    {
      method: 'get',
      path: '/logs',
      summary: 'List audit log entries, newest first (token exchanges, sign-ins, ...)',
      tag,
      query: paginationQuery.extend({
        userId: z.string().max(64).optional(),
        applicationId: z.string().max(64).optional(),
        logKey: z.string().max(128).optional(),
        start_time: millis.optional(),
        end_time: millis.optional(),
      }),
      response: z.array(logSchema),
    },
    async ({ query }, ctx) => {
      if (query.start_time !== undefined && query.end_time !== undefined && query.start_time > query.end_time) {
        throw new RequestError({ code: 'guard.invalid_input', status: 400 }, 'start_time must not be after end_time.');
      }
      const rows = db('logs').select('*');
      const filters: Array<[string, string, unknown]> = [
        ['user_id', '=', query.userId],
        ['application_id', '=', query.applicationId],
        ['key', '=', query.logKey],
        ['created_at', '>=', query.start_time],
        ['created_at', '<=', query.end_time],
      ];
      for (const [column, operator, value] of filters) {
        if (value !== undefined) {
          rows.where(column, operator, value as string);
        }
      }
      // Unpaged lists of an audit log would be unbounded: 20 entries unless a page is asked for.
      const page = pageOf({ page: query.page ?? 1, page_size: query.page_size ?? 20 });
      const { rows: found, total } = await listPage<Row>(rows, page);
      setTotal(ctx, total);
      return found.map(toLog);
    },
  );

  api.add(
    { method: 'get', path: '/logs/:id', summary: 'Get an audit log entry', tag, params: z.object({ id: z.string().min(1).max(21) }), response: logSchema, errors: [404] },
    async ({ params }) => {
      const row = await db('logs').where({ id: params.id }).first<Row | undefined>();
      if (!row) {
        throw notFound('log', params.id);
      }
      return toLog(row);
    },
  );
}
