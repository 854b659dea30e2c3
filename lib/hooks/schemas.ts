import { z } from 'zod';

import { boundedRecord } from '../http/limits.ts';
import { hookEvents, subscribableHookEvents } from './events.ts';
import { signatureSchemes } from './signing/signing-keys.ts';

export const hookEventSchema = z.enum(hookEvents);
/** An event a hook may list (Logto's whole list: events.ts). */
export const subscribableEventSchema = z.enum(subscribableHookEvents);

/** Logto's `nonemptyUniqueHookEventsGuard`: at least one event, duplicates dropped. */
const listOf = <T extends readonly [string, ...string[]]>(events: T) =>
  z
    .array(z.enum(events))
    .min(1)
    .max(subscribableHookEvents.length * 2)
    .transform((list) => [...new Set(list)]);
const eventList = listOf(subscribableHookEvents);

/** RFC 9110 token characters; a value Node can send, without control characters (no header injection). */
const headerName = z.string().regex(/^[!#$%&'*+\-.^_`|~0-9A-Za-z]{1,256}$/, 'must be an HTTP header name');
const headerValue = z
  .string()
  .max(8192)
  .regex(/^[\t\x20-\x7e\x80-\xff]*$/, 'must hold visible Latin-1 characters only (no line breaks)');

/**
 * `url` is checked by the target guard (400 `hook.invalid_url`), not here, so that a bad scheme
 * answers with Logto's code rather than a schema error. `retries` is Logto's deprecated field:
 * accepted and kept, the retry schedule is the service's.
 */
export const hookConfigSchema = z.object({
  url: z.string().min(1).max(2048),
  headers: boundedRecord(headerName, headerValue, 50).optional(),
  retries: z.number().int().min(0).max(3).optional(),
});

export type HookConfig = z.output<typeof hookConfigSchema>;

/** `per-entity`: events about one user, role or organization arrive one at a time, in commit order. */
export const hookOrderingSchema = z.enum(['none', 'per-entity']);

/**
 * The hook fields beyond Logto's (CONTRACT.md §9): how deliveries are signed, shaped, filtered,
 * ordered and throttled, and who hears of a disabled hook.
 */
const deliveryFields = {
  signatureScheme: z.enum(signatureSchemes),
  /** `thin`: the envelope, the delivery's id, the entity's id and the actor, no personal data. */
  payload: z.enum(['full', 'thin']),
  /** Events these applications caused (their `actor`) are not delivered: a sync service's own writes. */
  excludeApplicationIds: z.array(z.string().min(1).max(64)).max(100),
  ordering: hookOrderingSchema,
  rateLimitPerSecond: z.number().int().min(1).max(10_000).nullable(),
  notifyEmail: z.email().max(254).nullable(),
};
/** The fields as a request (or a configuration file) may give them: each optional. */
export const deliveryFieldsInput = z.object(deliveryFields).partial().shape;

export const hookSchema = z.object({
  tenantId: z.string(),
  id: z.string(),
  name: z.string(),
  /** Logto's deprecated single event: always null here, `events` says it all. */
  event: subscribableEventSchema.nullable(),
  events: z.array(subscribableEventSchema),
  config: hookConfigSchema,
  signingKey: z.string(),
  enabled: z.boolean(),
  /** Why the service disabled it (410 Gone, failing too long); null when enabled or disabled by hand. */
  disabledReason: z.string().nullable(),
  createdAt: z.number(),
  ...deliveryFields,
});

export type Hook = z.output<typeof hookSchema>;

export const executionStatsSchema = z.object({ requestCount: z.number(), successCount: z.number() });

export const hookWithStatsSchema = hookSchema.extend({ executionStats: executionStatsSchema.optional() });

export type HookWithStats = z.output<typeof hookWithStatsSchema>;

export const createHookBody = z.strictObject({
  tenantId: z.string().max(64).optional(),
  name: z.string().min(1).max(256).optional(),
  /** Deprecated (Logto): one event; `events` wins when both are given. */
  event: hookEventSchema.optional(),
  events: eventList.optional(),
  config: hookConfigSchema,
  enabled: z.boolean().optional(),
  createdAt: z.number().optional(),
  ...deliveryFieldsInput,
});

export const updateHookBody = z.strictObject({
  tenantId: z.string().max(64).optional(),
  name: z.string().min(1).max(256).optional(),
  event: hookEventSchema.nullable().optional(),
  events: eventList.optional(),
  config: hookConfigSchema.optional(),
  enabled: z.boolean().optional(),
  createdAt: z.number().optional(),
  ...deliveryFieldsInput,
});

/** Sample payloads exist for the events that occur: a test sends those. */
export const testHookBody = z.strictObject({
  events: listOf(hookEvents).optional(),
  /** Deprecated (Logto). */
  event: hookEventSchema.optional(),
  config: hookConfigSchema,
});

export const hookLogSchema = z.object({
  id: z.string(),
  key: z.string(),
  createdAt: z.number(),
  payload: z.object({
    /** The entry's `key` again: Logto's log payloads carry it, and its tests read it there. */
    key: z.string(),
    hookId: z.string(),
    result: z.enum(['Success', 'Error']),
    /** `body`: the answer's JSON, or its text (the first 16 KB) when it is not JSON. */
    response: z.object({ statusCode: z.number().nullable(), body: z.unknown() }),
    error: z.string().optional(),
    attempt: z.number(),
    webhookId: z.string(),
    durationMs: z.number(),
  }),
});

export type HookLog = z.output<typeof hookLogSchema>;
