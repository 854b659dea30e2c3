import { z } from 'zod';

import { RequestError } from '../http/errors.ts';

/**
 * Logto's `usernamePolicy`: whether usernames differ by case, and what a username a person chooses
 * may hold. Administrators' writes keep only the always-on rule (a letter or `_` first, then
 * letters, digits and `_`: users/schemas.ts); the lengths and kinds here bind what people choose at
 * sign-up, in their profile and in the Account API.
 */
export const usernamePolicySchema = z
  .strictObject({
    caseSensitive: z.boolean(),
    minLength: z.number().int().min(1).max(128),
    maxLength: z.number().int().min(1).max(128),
    allowedChars: z.strictObject({
      lowercase: z.boolean(),
      uppercase: z.boolean(),
      numbers: z.boolean(),
      underscore: z.boolean(),
    }),
  })
  .refine((policy) => policy.minLength <= policy.maxLength, {
    message: 'The minimum length cannot exceed the maximum length.',
    path: ['maxLength'],
  })
  .refine(({ allowedChars }) => allowedChars.lowercase || allowedChars.uppercase || allowedChars.underscore, {
    message: 'Allow lowercase, uppercase or underscore: a username cannot start with a digit.',
    path: ['allowedChars'],
  });
export type UsernamePolicy = z.output<typeof usernamePolicySchema>;

/** Usernames as they were before the setting: case-sensitive, 1 to 128 characters of every kind. */
export const defaultUsernamePolicy: UsernamePolicy = {
  caseSensitive: true,
  minLength: 1,
  maxLength: 128,
  allowedChars: { lowercase: true, uppercase: true, numbers: true, underscore: true },
};

/** A username a person chooses: 422 with Logto's code for the first rule it breaks. */
export function assertUsernameAllowed(username: string, policy: UsernamePolicy): void {
  const { minLength, maxLength, allowedChars } = policy;
  if (username.length < minLength) {
    throw new RequestError('user.username_too_short', { minLength });
  }
  if (username.length > maxLength) {
    throw new RequestError('user.username_too_long', { maxLength });
  }
  const kinds = [
    ['uppercase', /[A-Z]/, 'user.username_uppercase_not_allowed'],
    ['lowercase', /[a-z]/, 'user.username_lowercase_not_allowed'],
    ['numbers', /\d/, 'user.username_numbers_not_allowed'],
    ['underscore', /_/, 'user.username_underscore_not_allowed'],
  ] as const;
  for (const [kind, pattern, code] of kinds) {
    if (!allowedChars[kind] && pattern.test(username)) {
      throw new RequestError(code);
    }
  }
}
