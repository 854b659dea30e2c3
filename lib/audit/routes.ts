import type { Knex } from 'knex';
import { z } from 'zod';

import { tenantId } from '../shared/tenant.ts';
import { RequestError } from '../http/errors.ts';
import { pageOf, paginationQuery, setTotal } from '../http/pagination.ts';
import type { Api } from '../http/route.ts';
import type { ServiceContext } from '../http/context.ts';
import { listPage, whereStartsWith } from '../storage/list.ts';
import { currentNames } from './names.ts';

const tag = 'Audit logs';
const logSchema = z.object({
  tenantId: z.string(),
  id: z.string(),
  key: z.string(),
  payload: z.record(z.string(), z.unknown()),
  createdAt: z.number(),
  /** Ours, beside Logto's shape: the current name of each id the entry mentions (users, applications, roles...). */
  names: z.record(z.string(), z.string()),
});

type Row = { id: string; key: string; payload: string; created_at: number };
type Payload = Record<string, unknown> & {
  userId?: unknown;
  applicationId?: unknown;
  createdId?: unknown;
  params?: unknown;
  bodyIds?: unknown;
};

const valuesOf = (value: unknown): unknown[] =>
  typeof value === 'object' && value !== null ? Object.values(value).flat() : [];

/** The ids an entry mentions: its actor or user, its application, a management write's targets. */
function mentionedIds(payload: Payload): string[] {
  return [
    payload.userId,
    payload.applicationId,
    payload.createdId,
    ...valuesOf(payload.params),
    ...valuesOf(payload.bodyIds),
  ].filter((value): value is string => typeof value === 'string');
}

/** Log rows as Logto shows them, with the names of the ids they mention. */
async function toLogs(db: Knex, rows: Row[]) {
  const entries = rows.map((row) => ({ row, payload: JSON.parse(row.payload) as Payload }));
  const names = await currentNames(db, [...new Set(entries.flatMap(({ payload }) => mentionedIds(payload)))]);
  return entries.map(({ row, payload }) => ({
    tenantId,
    id: row.id,
    key: row.key,
    payload,
    createdAt: row.created_at,
    names: Object.fromEntries(
      mentionedIds(payload).flatMap((id) => {
        const name = names.get(id);
        return name === undefined ? [] : [[id, name]];
      }),
    ),
  }));
}

const millis = z.coerce.number().int().min(0);
const id = z.string().min(1).max(128);

export function auditLogRoutes(api: Api, { db }: ServiceContext): void {
  api.add(
    {
      method: 'get',
      path: '/logs',
      summary:
        'List audit log entries, newest first (management writes, sign-ins and refused verifications, token exchanges)',
      tag,
      query: paginationQuery.extend({
        userId: z
          .string()
          .max(64)
          .optional()
          .describe('The user who acted or signed in (a console administrator for management writes).'),
        applicationId: z
          .string()
          .max(64)
          .optional()
          .describe('The application that acted or through which the user signed in.'),
        logKey: z
          .string()
          .max(128)
          .optional()
          .describe('Exactly this key, e.g. `Management.Write`, `Interaction.SignIn.Submit`.'),
        logKeyPrefix: z
          .string()
          .min(1)
          .max(128)
          .optional()
          .describe('Keys starting with this, e.g. `Interaction.` for every sign-in step.'),
        result: z
          .enum(['Success', 'Error'])
          .optional()
          .describe('`Error`: refused writes, failed verifications, failed exchanges.'),
        targetId: id.optional().describe('Management writes about this id (a path id or the id the write created).'),
        start_time: millis.optional().describe('From this time (ms since the epoch), inclusive.'),
        end_time: millis.optional().describe('Up to this time (ms since the epoch), inclusive.'),
      }),
      response: z.array(logSchema),
    },
    async ({ query }, ctx) => {
      if (query.start_time !== undefined && query.end_time !== undefined && query.start_time > query.end_time) {
        throw new RequestError('guard.invalid_input', { reason: 'start_time must not be after end_time.' });
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
      if (query.logKeyPrefix !== undefined) {
        whereStartsWith(rows, 'key', query.logKeyPrefix);
      }
      if (query.result !== undefined) {
        // The payload is JSON text with `result` at its top level (as the dashboard counts failures).
        rows.where('payload', 'like', `%"result":"${query.result}"%`);
      }
      if (query.targetId !== undefined) {
        rows.whereIn('id', db('log_targets').select('log_id').where('target_id', query.targetId));
      }
      // Unpaged lists of an audit log would be unbounded: 20 entries unless a page is asked for.
      const page = pageOf({ page: query.page ?? 1, page_size: query.page_size ?? 20 });
      const { rows: found, total } = await listPage<Row>(rows, page);
      setTotal(ctx, total);
      return toLogs(db, found);
    },
  );

  api.add(
    {
      method: 'get',
      path: '/logs/:id',
      summary: 'Get an audit log entry',
      tag,
      params: z.object({ id: z.string().min(1).max(21) }),
      response: logSchema,
      errors: [404],
    },
    async ({ params }) => {
      const row = await db('logs').where({ id: params.id }).first<Row | undefined>();
      if (!row) {
        throw new RequestError('entity.not_exists_with_id', { entity: 'log', id: params.id });
      }
      const [log] = await toLogs(db, [row]);
      return log;
    },
  );
}
