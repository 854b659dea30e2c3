import { z } from 'zod';

import { entityId } from '../shared/entity-id.ts';
import { email } from '../users/schemas.ts';

export const oneTimeTokenStatuses = ['active', 'consumed', 'revoked', 'expired'] as const;
export type OneTimeTokenStatus = (typeof oneTimeTokenStatuses)[number];

/** What a token carries besides the email: organizations joined on use, the one kind of interaction it serves. */
export const oneTimeTokenContextSchema = z.strictObject({
  jitOrganizationIds: z.array(entityId).max(100).optional(),
  interactionEvent: z.enum(['SignIn', 'Register', 'ForgotPassword']).optional(),
});

/** Logto's `OneTimeToken`. */
export const oneTimeTokenSchema = z.object({
  tenantId: z.string(),
  id: z.string(),
  email: z.string(),
  token: z.string(),
  context: oneTimeTokenContextSchema,
  status: z.enum(oneTimeTokenStatuses),
  expiresAt: z.number(),
  createdAt: z.number(),
});
export type OneTimeToken = z.output<typeof oneTimeTokenSchema>;

export const createOneTimeTokenBody = z.strictObject({
  email,
  /** Seconds; Logto's default is ten minutes. */
  expiresIn: z
    .number()
    .int()
    .min(1)
    .max(30 * 24 * 3600)
    .optional(),
  context: oneTimeTokenContextSchema.optional(),
});
