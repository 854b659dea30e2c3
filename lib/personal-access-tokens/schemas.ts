import { z } from 'zod';

/** Unique within the user; Logto's bounds. */
export const tokenName = z.string().min(1).max(256);

/** Logto's `PersonalAccessToken`: the value is shown on every read, as Logto shows it. */
export const personalAccessTokenSchema = z.object({
  tenantId: z.string(),
  userId: z.string(),
  name: z.string(),
  value: z.string(),
  createdAt: z.number(),
  /** Milliseconds since the epoch; null: it never expires. */
  expiresAt: z.number().nullable(),
});
export type PersonalAccessToken = z.output<typeof personalAccessTokenSchema>;

export const createPersonalAccessTokenBody = z.strictObject({
  name: tokenName,
  expiresAt: z.number().int().nullable().optional(),
});
