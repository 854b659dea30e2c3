import { z } from 'zod';

import { pageOf, paginationQuery, setTotal } from '../http/api/pagination.ts';
import type { Api } from '../http/api/route.ts';
import type { ServiceContext } from '../http/context.ts';
import { orNotFound, RequestError } from '../http/errors.ts';
import { idParams } from '../shared/entity-id.ts';
import { email } from '../users/schemas.ts';
import { deleteOneTimeToken, findOneTimeToken, listOneTimeTokens, updateOneTimeTokenStatus } from './queries.ts';
import { createOneTimeTokenBody, oneTimeTokenSchema, oneTimeTokenStatuses } from './schemas.ts';
import { consumeOneTimeToken, createOneTimeToken } from './tokens.ts';

const tag = 'One-time tokens';

/**
 * Logto's one-time tokens: an application makes one for an email and sends it as a link (a magic
 * link, an invitation); the Experience API (`verification/one-time-token/verify`) or `verify` here
 * spends it once, before it expires.
 */
export function oneTimeTokenRoutes(api: Api, { db }: ServiceContext): void {
  api.add(
    {
      method: 'post',
      path: '/one-time-tokens',
      summary: 'Create a one-time token for an email (expiresIn seconds, ten minutes by default)',
      tag,
      body: createOneTimeTokenBody,
      response: oneTimeTokenSchema,
    },
    async ({ body }, _ctx, trx) => createOneTimeToken(trx, body),
  );

  api.add(
    {
      method: 'get',
      path: '/one-time-tokens',
      summary: 'List one-time tokens, newest first, by email and status',
      tag,
      query: paginationQuery.extend({
        email: z.string().max(128).optional(),
        status: z.enum(oneTimeTokenStatuses).optional(),
      }),
      response: z.array(oneTimeTokenSchema),
    },
    async ({ query }, ctx) => {
      const { items, total } = await listOneTimeTokens(db, query, pageOf(query));
      setTotal(ctx, total);
      return items;
    },
  );

  api.add(
    {
      method: 'get',
      path: '/one-time-tokens/:id',
      summary: 'Get a one-time token',
      tag,
      params: idParams,
      response: oneTimeTokenSchema,
      errors: [404],
    },
    async ({ params }) => orNotFound(await findOneTimeToken(db, params.id), 'one-time token', params.id),
  );

  api.add(
    {
      method: 'post',
      path: '/one-time-tokens/verify',
      summary: 'Spend a one-time token: it must be for this email, unused, unrevoked and unexpired',
      tag,
      body: z.strictObject({ email, token: z.string().min(1).max(256) }),
      response: oneTimeTokenSchema,
      errors: [404],
      // What it decides (spent, or expired) stays decided when the answer is an error.
      transaction: false,
    },
    async ({ body }, _ctx, pool) => consumeOneTimeToken(pool, body.token, body.email),
  );

  api.add(
    {
      method: 'put',
      path: '/one-time-tokens/:id/status',
      summary: 'Set a one-time token’s status (revoke it); it cannot be made Active again',
      tag,
      params: idParams,
      body: z.strictObject({ status: z.enum(oneTimeTokenStatuses) }),
      response: oneTimeTokenSchema,
      errors: [404],
    },
    async ({ params, body }, _ctx, trx) => {
      orNotFound(await findOneTimeToken(trx, params.id), 'one-time token', params.id);
      if (body.status === 'active') {
        throw new RequestError('one_time_token.cannot_reactivate_token');
      }
      await updateOneTimeTokenStatus(trx, params.id, body.status);
      return orNotFound(await findOneTimeToken(trx, params.id), 'one-time token', params.id);
    },
  );

  api.add(
    {
      method: 'delete',
      path: '/one-time-tokens/:id',
      summary: 'Delete a one-time token',
      tag,
      params: idParams,
      errors: [404],
    },
    async ({ params }, _ctx, trx) => {
      if (!(await deleteOneTimeToken(trx, params.id))) {
        throw new RequestError('entity.not_found', { reason: `The one-time token \`${params.id}\` does not exist.` });
      }
    },
  );
}
