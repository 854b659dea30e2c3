import type { Knex } from 'knex';
import { z } from 'zod';

import { pageOf, paginationQuery, setTotal } from '../http/api/pagination.ts';
import type { Api } from '../http/api/route.ts';
import type { ServiceContext } from '../http/context.ts';
import { orNotFound, RequestError } from '../http/errors.ts';
import { entityId, idParams } from '../shared/entity-id.ts';
import { tenantId } from '../shared/tenant.ts';
import type { Queryable } from '../storage/database.ts';
import { generateId, generateSecret } from '../storage/ids.ts';
import { withTransaction } from '../storage/transaction.ts';
import { executionStats, listAttempts } from './delivery/attempt-queries.ts';
import { findDeliveryStatus, requeueDeliveries } from './delivery/delivery-queries.ts';
import { setFailingSince } from './delivery/dispatch-queries.ts';
import { WebhookSender } from './delivery/send.ts';
import type { HookEvent } from './events.ts';
import { notifyAfter } from './outbox.ts';
import { deleteHook, findHook, findHookForUpdate, insertHook, listHooks, updateHook } from './queries.ts';
import { samplePayload } from './samples.ts';
import {
  createHookBody,
  type Hook,
  type HookConfig,
  hookLogSchema,
  hookSchema,
  hookWithStatsSchema,
  testHookBody,
  updateHookBody,
} from './schemas.ts';
import { requestHeaders } from './signing/signature.ts';
import { getSigningHook, signingKeyRoutes } from './signing/signing-key-routes.ts';
import { keyFor, rotatedKeys } from './signing/signing-keys.ts';
import { assertHookTarget } from './target-guard.ts';

const tag = 'Hooks';
const day = 24 * 60 * 60 * 1000;

/** Logto's truthy query values. */
const truthy = z
  .string()
  .optional()
  .transform((value) => ['true', '1', 'yes'].includes(value?.toLowerCase() ?? ''));
const statsQuery = z.object({ includeExecutionStats: truthy });
const millis = z.coerce.number().int().min(0);

const getHook = async (db: Queryable, id: string) => orNotFound(await findHook(db, id), 'hook', id);
const getHookForUpdate = async (trx: Knex.Transaction, id: string) =>
  orNotFound(await findHookForUpdate(trx, id), 'hook', id);

async function withStats(db: Knex, hooks: Hook[], include: boolean) {
  if (!include) {
    return hooks;
  }
  const stats = await executionStats(
    db,
    hooks.map(({ id }) => id),
    Date.now() - day,
  );
  return hooks.map((hook) => ({ ...hook, executionStats: stats.get(hook.id) ?? { requestCount: 0, successCount: 0 } }));
}

/**
 * Logto's hook management (`/hooks`), with the test request, recent logs and (beyond Logto) the
 * re-sending of a failed delivery. Every write of a hook bumps the outbox's 'hooks' cache in its
 * transaction.
 */
export function hookRoutes(api: Api, context: ServiceContext): void {
  const { db, config } = context;
  // One-off requests to URLs that may be no hook's: no sockets kept open.
  const tester = new WebhookSender({ allowPrivateTargets: config.hooksAllowPrivateTargets, keepAlive: false });
  const checkTarget = async (hookConfig: HookConfig) => {
    await assertHookTarget(hookConfig.url, config.hooksAllowPrivateTargets);
  };

  api.add(
    {
      method: 'get',
      path: '/hooks',
      summary: 'List hooks, optionally with their execution stats of the last 24 hours',
      tag,
      query: paginationQuery.extend(statsQuery.shape),
      response: z.array(hookWithStatsSchema),
    },
    async ({ query }, ctx) => {
      const { items, total } = await listHooks(db, pageOf(query));
      setTotal(ctx, total);
      return withStats(db, items, query.includeExecutionStats);
    },
  );

  api.add(
    {
      method: 'post',
      path: '/hooks',
      summary: 'Create a hook (its signing key is generated)',
      tag,
      body: createHookBody,
      response: hookSchema,
      status: 201,
      // The target's name is resolved first: no transaction waits on DNS.
      transaction: false,
    },
    async ({ body }, _ctx, db) => {
      const events = body.events ?? (body.event ? [body.event] : undefined);
      if (!events) {
        throw new RequestError('hook.missing_events');
      }
      await checkTarget(body.config);
      const hook: Hook = {
        tenantId,
        id: generateId(),
        name: body.name ?? '',
        event: null,
        events,
        config: body.config,
        signingKey: generateSecret(),
        enabled: body.enabled ?? true,
        disabledReason: null,
        ordering: body.ordering ?? 'none',
        rateLimitPerSecond: body.rateLimitPerSecond ?? null,
        notifyEmail: body.notifyEmail ?? null,
        createdAt: Date.now(),
        signatureScheme: body.signatureScheme ?? 'hmac-sha256',
        payload: body.payload ?? 'full',
        excludeApplicationIds: body.excludeApplicationIds ?? [],
      };
      const current = keyFor(hook.signatureScheme, hook.signingKey);
      await withTransaction(db, (trx) => insertHook(trx, hook, { current }));
      return hook;
    },
  );

  api.add(
    {
      method: 'get',
      path: '/hooks/:id',
      summary: 'Get a hook, optionally with its execution stats of the last 24 hours',
      tag,
      params: idParams,
      query: statsQuery,
      response: hookWithStatsSchema,
      errors: [404],
    },
    async ({ params, query }) => {
      const [hook] = await withStats(db, [await getHook(db, params.id)], query.includeExecutionStats);
      return hook;
    },
  );

  api.add(
    {
      method: 'patch',
      path: '/hooks/:id',
      summary: 'Update a hook',
      tag,
      params: idParams,
      body: updateHookBody,
      response: hookSchema,
      errors: [404],
      // As for a new hook: the target is checked before the transaction.
      transaction: false,
    },
    async ({ params, body }, _ctx, db) => {
      if (body.config) {
        await checkTarget(body.config);
      }
      return withTransaction(db, async (trx) => {
        if (body.enabled === true) {
          // Enabled again: its run of failures starts over. The dispatch row before the hook's, as
          // the dispatchers lock them.
          await setFailingSince(trx, params.id, null);
        }
        const hook = await getHookForUpdate(trx, params.id);
        const next: Hook = {
          ...hook,
          name: body.name ?? hook.name,
          events: body.events ?? (body.event ? [body.event] : hook.events),
          config: body.config ?? hook.config,
          enabled: body.enabled ?? hook.enabled,
          signatureScheme: body.signatureScheme ?? hook.signatureScheme,
          payload: body.payload ?? hook.payload,
          excludeApplicationIds: body.excludeApplicationIds ?? hook.excludeApplicationIds,
          // Enabled again, it has no reason to be off.
          disabledReason: (body.enabled ?? hook.enabled) ? null : hook.disabledReason,
          ordering: body.ordering ?? hook.ordering,
          rateLimitPerSecond: body.rateLimitPerSecond === undefined ? hook.rateLimitPerSecond : body.rateLimitPerSecond,
          notifyEmail: body.notifyEmail === undefined ? hook.notifyEmail : body.notifyEmail,
        };
        // A new scheme is a rotation that keeps the HMAC secret: the old key signs on for the overlap.
        const keys =
          next.signatureScheme === hook.signatureScheme
            ? undefined
            : rotatedKeys(await getSigningHook(trx, hook.id), next.signatureScheme, {
                rotate: false,
                now: Date.now(),
                overlapMs: config.hooksSignatureOverlapSeconds * 1000,
              }).keys;
        await updateHook(trx, next, keys);
        return next;
      });
    },
  );

  api.add(
    {
      method: 'delete',
      path: '/hooks/:id',
      summary: 'Delete a hook, its pending deliveries and its logs',
      tag,
      params: idParams,
      errors: [404],
    },
    async ({ params }, _ctx, trx) => {
      if (!(await deleteHook(trx, params.id))) {
        throw new RequestError('entity.not_exists_with_id', { entity: 'hook', id: params.id });
      }
    },
  );

  signingKeyRoutes(api, context);

  api.add(
    {
      method: 'post',
      path: '/hooks/:id/test',
      summary:
        "Send one sample payload per event to the given URL, signed with the hook's key; 422 when the endpoint fails",
      tag,
      params: idParams,
      body: testHookBody,
      errors: [404, 422],
      // It sends requests and changes nothing.
      transaction: false,
    },
    async ({ params, body }, _ctx, db) => {
      const events: HookEvent[] | undefined = body.events ?? (body.event ? [body.event] : undefined);
      if (!events) {
        throw new RequestError('hook.missing_events');
      }
      const hook = await getSigningHook(db, params.id);
      await checkTarget(body.config);
      for (const event of events) {
        const payload = JSON.stringify(samplePayload(event, hook.id, new Date().toISOString()));
        const result = await tester.send(
          body.config.url,
          payload,
          requestHeaders(body.config, hook, generateId(), payload),
        );
        if (result.refused) {
          throw new RequestError('hook.invalid_url', { reason: result.error ?? 'The hook target is not allowed.' });
        }
        if (result.statusCode === undefined) {
          throw new RequestError('hook.send_test_payload_failed', { error: result.error ?? 'no response' });
        }
        if (result.statusCode < 200 || result.statusCode >= 300) {
          throw new RequestError('hook.endpoint_responded_with_error', {
            data: { responseStatus: result.statusCode, responseBody: result.body ?? '' },
          });
        }
      }
    },
  );

  api.add(
    {
      method: 'get',
      path: '/hooks/:id/recent-logs',
      summary: 'Delivery attempts of a hook, newest first (by default those of the last 24 hours)',
      tag,
      params: idParams,
      query: paginationQuery.extend({
        logKey: z.string().max(128).optional(),
        start_time: millis.optional(),
        end_time: millis.optional(),
      }),
      response: z.array(hookLogSchema),
    },
    async ({ params, query }, ctx) => {
      if (query.start_time !== undefined && query.end_time !== undefined && query.start_time > query.end_time) {
        throw new RequestError('guard.invalid_input', { reason: 'start_time must not be after end_time.' });
      }
      const page = pageOf({ page: query.page ?? 1, page_size: query.page_size ?? 20 });
      const { items, total } = await listAttempts(
        db,
        params.id,
        {
          // Without bounds, the last 24 hours.
          from: query.start_time ?? (query.end_time === undefined ? Date.now() - day : undefined),
          to: query.end_time,
          event: query.logKey?.replace(/^TriggerHook\./, ''),
        },
        page,
      );
      setTotal(ctx, total);
      return items;
    },
  );

  api.add(
    {
      method: 'post',
      path: '/hooks/:id/deliveries/:deliveryId/resend',
      summary: 'Queue a failed delivery again, with the same webhook-id and a fresh retry schedule',
      tag,
      params: idParams.extend({ deliveryId: entityId }),
      errors: [404, 422],
    },
    async ({ params }, _ctx, trx) => {
      const hook = await getHookForUpdate(trx, params.id);
      const status = await findDeliveryStatus(trx, hook.id, params.deliveryId);
      if (!status) {
        throw new RequestError('entity.not_exists_with_id', { entity: 'delivery', id: params.deliveryId });
      }
      if (!hook.enabled) {
        throw new RequestError('hook.disabled');
      }
      if ((await requeueDeliveries(trx, [params.deliveryId])) === 0) {
        throw new RequestError('hook.delivery_not_failed', { status });
      }
      notifyAfter(trx);
    },
  );
}
