import { z } from 'zod';

/** Logto's `AccountCenterControlValue`: a field is hidden, shown, or shown and changeable. */
const control = z.enum(['Off', 'ReadOnly', 'Edit']);
export type FieldControl = z.output<typeof control>;

/**
 * Logto's account center fields. `social` governs `identities`, `session` the signed-in sessions;
 * `passkey` (the passkey sign-in prompt, `mfa` where unset) and `trustedDevice` are kept so that a
 * Logto configuration loads unchanged.
 */
export const accountCenterFields = [
  'name',
  'avatar',
  'profile',
  'email',
  'phone',
  'password',
  'username',
  'social',
  'customData',
  'mfa',
  'passkey',
  'session',
  'trustedDevice',
] as const;
export type AccountCenterField = (typeof accountCenterFields)[number];

const fieldsSchema = z.strictObject(
  Object.fromEntries(accountCenterFields.map((field) => [field, control.optional()])) as Record<
    AccountCenterField,
    z.ZodOptional<typeof control>
  >,
);

export const accountCenterSchema = z.object({
  tenantId: z.string(),
  id: z.string(),
  enabled: z.boolean(),
  /** A field not named is `Off`, as in Logto. */
  fields: fieldsSchema,
});
export type AccountCenter = z.output<typeof accountCenterSchema>;

/** `fields`, when given, replaces the stored ones (as Logto's `PATCH` does). */
export const updateAccountCenterBody = z.strictObject({
  enabled: z.boolean().optional(),
  fields: fieldsSchema.optional(),
});
export type AccountCenterChanges = z.output<typeof updateAccountCenterBody>;
