import { z } from 'zod';

/** RFC 8707 §2: an absolute URI without a fragment. */
export const resourceIndicator = z
  .string()
  .max(255)
  .refine((value) => URL.canParse(value) && !value.includes('#'), 'must be an absolute URI without a fragment');

/** RFC 6749 §3.3 scope-token: printable ASCII except space, `"` and `\`. */
export const scopeName = z
  .string()
  .min(1)
  .max(256)
  .regex(/^[\x21\x23-\x5B\x5D-\x7E]+$/, 'must be printable ASCII without spaces, quotes or backslashes');

export const accessTokenTtl = z
  .number()
  .int()
  .min(60)
  .max(86_400 * 30);

export const scopeSchema = z.object({
  tenantId: z.string(),
  id: z.string(),
  resourceId: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  createdAt: z.number(),
});

export const resourceSchema = z.object({
  tenantId: z.string(),
  id: z.string(),
  name: z.string(),
  indicator: z.string(),
  isDefault: z.boolean(),
  accessTokenTtl: z.number(),
  /** Whether token exchange may issue tokens for it (beyond Logto's shape; never for the management API). */
  isExchangeTarget: z.boolean(),
  scopes: z.array(scopeSchema).optional(),
});

export type Scope = z.output<typeof scopeSchema>;
export type Resource = z.output<typeof resourceSchema>;

export const createResourceBody = z.strictObject({
  tenantId: z.string().max(64).optional(),
  name: z.string().min(1).max(256),
  indicator: resourceIndicator,
  accessTokenTtl: accessTokenTtl.optional(),
  isExchangeTarget: z.boolean().optional(),
});

export const updateResourceBody = z.strictObject({
  tenantId: z.string().max(64).optional(),
  name: z.string().min(1).max(256).optional(),
  accessTokenTtl: accessTokenTtl.optional(),
  isExchangeTarget: z.boolean().optional(),
  /** Accepted and ignored, as Logto does: an indicator is fixed once created (tokens carry it). */
  indicator: z.string().max(2048).optional(),
});

export const createScopeBody = z.strictObject({
  name: scopeName,
  description: z.string().max(4096).nullable().optional(),
});

export const updateScopeBody = createScopeBody.partial();
