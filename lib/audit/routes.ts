import { z } from 'zod';

import { pageOf, paginationQuery, setTotal } from '../http/api/pagination.ts';
import type { Api } from '../http/api/route.ts';
import type { ServiceContext } from '../http/context.ts';
import { RequestError } from '../http/errors.ts';
import { idParams } from '../shared/entity-id.ts';
import { tenantId } from '../shared/tenant.ts';
import type { Queryable } from '../storage/database.ts';
import type { SharedCache } from '../storage/shared-cache.ts';
import { currentNames } from './names.ts';
import { findLog, listLogs, type Log } from './queries.ts';

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

/** A token exchange's actors (`params.actorChain`, `[{sub, clientId?}]`): users and applications. */
const actorChainIds = (chain: unknown): unknown[] =>
  Array.isArray(chain)
    ? chain.flatMap((actor: unknown) =>
        typeof actor === 'object' && actor !== null ? Object.values(actor as Record<string, unknown>) : [],
      )
    : [];

/** The ids an entry mentions: its actor or user, its application, a management write's targets. */
function mentionedIds(payload: Log['payload']): string[] {
  return [
    payload.userId,
    payload.applicationId,
    payload.createdId,
    ...Object.values(payload.params ?? {}).flat(),
    ...actorChainIds(payload.params?.actorChain),
    ...Object.values(payload.bodyIds ?? {}).flat(),
  ].filter((value): value is string => typeof value === 'string');
}

/** Log entries as Logto shows them, with the names of the ids they mention. */
async function toLogs(db: Queryable, cache: SharedCache, logs: Log[]) {
  const names = await currentNames(db, cache, [...new Set(logs.flatMap(({ payload }) => mentionedIds(payload)))]);
  return logs.map((log) => ({
    tenantId,
    ...log,
    names: Object.fromEntries(
      mentionedIds(log.payload).flatMap((id) => {
        const name = names.get(id);
        return name === undefined ? [] : [[id, name]];
      }),
    ),
  }));
}

const millis = z.coerce.number().int().min(0);
const id = z.string().min(1).max(128);

export function auditLogRoutes(api: Api, { db, cache }: ServiceContext): void {
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
          .max(255)
          .optional()
          .describe(
            'The application that acted or through which the user signed in (a client id URL for a client named by its metadata document).',
          ),
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
      // Unpaged lists of an audit log would be unbounded: 20 entries unless a page is asked for.
      const page = pageOf({ page: query.page ?? 1, page_size: query.page_size ?? 20 });
      const { items, total } = await listLogs(
        db,
        {
          userId: query.userId,
          applicationId: query.applicationId,
          key: query.logKey,
          keyPrefix: query.logKeyPrefix,
          result: query.result,
          targetId: query.targetId,
          from: query.start_time,
          to: query.end_time,
        },
        page,
      );
      setTotal(ctx, total);
      return toLogs(db, cache, items);
    },
  );

  api.add(
    {
      method: 'get',
      path: '/logs/:id',
      summary: 'Get an audit log entry',
      tag,
      params: idParams,
      response: logSchema,
      errors: [404],
    },
    async ({ params }) => {
      const log = await findLog(db, params.id);
      if (!log) {
        throw new RequestError('entity.not_exists_with_id', { entity: 'log', id: params.id });
      }
      const [shown] = await toLogs(db, cache, [log]);
      return shown;
    },
  );
}
