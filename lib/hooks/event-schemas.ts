import { z } from 'zod';

import { jsonSchema } from '../http/api/openapi.ts';
import { userSchema } from '../users/schemas.ts';
import { type DataHookEvent, type HookEvent, hookEventGroup, hookEvents } from './events.ts';
import { samplePayload } from './samples.ts';

const actorSchema = z
  .object({ type: z.enum(['application', 'user']), id: z.string() })
  .describe('Who made the change: the application of the management token, or the end user');
const ids = z.array(z.string());

const envelope = (event: HookEvent) => ({
  hookId: z.string(),
  event: z.literal(event),
  createdAt: z.iso.datetime(),
});

/** The request that caused a data event: absent for a change no request caused (the CLI's). */
const requestFields = z
  .object({
    path: z.string(),
    method: z.string(),
    status: z.number().int(),
    params: z.record(z.string(), z.unknown()),
    matchedRoute: z.string(),
    ip: z.string(),
    userAgent: z.string(),
  })
  .partial().shape;

/** The fields some data events carry beside `data` (CONTRACT.md §5). */
const extraFields: Partial<Record<HookEvent, z.ZodRawShape>> = {
  'Role.Scopes.Updated': { roleId: z.string() },
  'OrganizationRole.Scopes.Updated': { organizationRoleId: z.string() },
  'Organization.Membership.Updated': {
    organizationId: z.string(),
    addedUserIds: ids.optional(),
    removedUserIds: ids.optional(),
    addedApplicationIds: ids.optional(),
    removedApplicationIds: ids.optional(),
  },
  'Identifier.Lockout': { type: z.string(), value: z.string() },
  'Message.RateLimited': { action: z.literal('VerificationCodeSend'), recipient: z.string() },
};

const interactionFields = {
  interactionEvent: z.enum(['SignIn', 'Register', 'ForgotPassword']),
  sessionId: z.string().optional(),
  userId: z.string(),
  user: userSchema.optional(),
  application: z.object({ id: z.string() }).optional(),
  userIp: z.string().optional(),
  userAgent: z.string().optional(),
};

/** One of `schemas`; two that say the same (two routes answering alike) count once. */
function oneOf(schemas: z.ZodType[]): z.ZodType {
  const distinct = [
    ...new Map(schemas.map((schema) => [JSON.stringify(jsonSchema(schema, 'output')), schema])).values(),
  ];
  return distinct.length === 1 ? distinct[0] : z.union(distinct as [z.ZodType, z.ZodType, ...z.ZodType[]]);
}

/** A thin hook's payload (`payload: "thin"`): the envelope, the delivery's id, the entity's id, the actor. */
const thinSchema = (event: HookEvent) =>
  z
    .object({ ...envelope(event), id: z.string(), entityId: z.string().nullable(), actor: actorSchema.nullable() })
    .describe('A thin payload (the hook has `payload: "thin"`)');

/**
 * The payload of `event` as a hook receives it, full or thin; `data` is one of `dataSchemas`
 * (data events only: what the management API answers, lib/management/event-data-schemas.ts).
 */
export function eventPayloadSchema(event: HookEvent, dataSchemas: z.ZodType[] = []): z.ZodType {
  const extra = extraFields[event] ?? {};
  const full = {
    interaction: () => z.object({ ...envelope(event), ...interactionFields }),
    exception: () => z.object({ ...envelope(event), ...extra }),
    data: () =>
      z.object({
        ...envelope(event),
        data: oneOf(dataSchemas.length > 0 ? dataSchemas : [z.unknown()]),
        ...requestFields,
        actor: actorSchema.nullable(),
        ...extra,
      }),
  }[hookEventGroup(event)]();
  return z.union([full, thinSchema(event)]);
}

/**
 * OpenAPI 3.1's `webhooks`: one entry per event, its payload's JSON Schema and, as its example,
 * the payload `POST /api/hooks/:id/test` sends (lib/hooks/samples.ts).
 */
export function webhookEntries(dataSchemas: Map<DataHookEvent, z.ZodType[]>): Record<string, unknown> {
  return Object.fromEntries(
    hookEvents.map((event) => [
      event,
      {
        post: {
          operationId: `webhook${event.replace(/\W/g, '')}`,
          tags: ['Hooks'],
          summary: `The ${event} event, as a hook subscribed to it receives it`,
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: jsonSchema(eventPayloadSchema(event, dataSchemas.get(event as DataHookEvent)), 'output'),
                examples: {
                  sample: {
                    summary: 'What the test request sends',
                    value: samplePayload(event, 'h1a2b3c4d5e6f7g8h9i0j'),
                  },
                },
              },
            },
          },
          responses: {
            '200': { description: 'Received (any 2xx)' },
            '400': { description: 'Refused: not retried (other than 408 and 429)' },
          },
        },
      },
    ]),
  );
}
