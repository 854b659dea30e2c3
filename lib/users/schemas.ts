import { z } from 'zod';

import { customDataInput } from '../http/limits.ts';
import { passwordAlgorithms } from './password-digests.ts';

/** Usernames: a letter or underscore first, then letters, digits and underscores (Logto's rule). */
export const username = z
  .string()
  .max(128)
  .regex(/^[A-Z_a-z]\w{0,127}$/, 'must start with a letter or _ and hold only letters, digits and _');
export const email = z.email().max(128);
const phoneDigits = 'must be an international number: 6 to 15 digits, spaces allowed (E.164)';

/**
 * Phone numbers in E.164 digits, as people type them: the leading + optional and spaces between
 * digits (`+61 0412 345 678`), both dropped (Logto stores digits only); a user's is stored without
 * a national trunk 0 (phone-numbers.ts).
 */
export const phone = z
  .string()
  .max(32)
  .regex(/^\+?\d[\d ]*$/, phoneDigits)
  .transform((value) => value.replaceAll(' ', '').replace(/^\+/, ''))
  .refine((digits) => /^\d{6,15}$/.test(digits), phoneDigits);

const address = z.strictObject({
  formatted: z.string().max(512).optional(),
  streetAddress: z.string().max(256).optional(),
  locality: z.string().max(128).optional(),
  region: z.string().max(128).optional(),
  postalCode: z.string().max(32).optional(),
  country: z.string().max(64).optional(),
});

export const userProfileSchema = z.strictObject({
  familyName: z.string().max(128).optional(),
  givenName: z.string().max(128).optional(),
  middleName: z.string().max(128).optional(),
  nickname: z.string().max(128).optional(),
  preferredUsername: z.string().max(128).optional(),
  profile: z.string().max(2048).optional(),
  website: z.string().max(2048).optional(),
  gender: z.string().max(32).optional(),
  birthdate: z.string().max(32).optional(),
  zoneinfo: z.string().max(64).optional(),
  locale: z.string().max(32).optional(),
  address: address.optional(),
});

export type UserProfile = z.output<typeof userProfileSchema>;

const jsonObject = z.record(z.string(), z.unknown());

export const userSchema = z.object({
  id: z.string(),
  username: z.string().nullable(),
  primaryEmail: z.string().nullable(),
  primaryPhone: z.string().nullable(),
  name: z.string().nullable(),
  avatar: z.string().nullable(),
  customData: jsonObject,
  identities: z.record(z.string(), z.object({ userId: z.string(), details: jsonObject.optional() })),
  lastSignInAt: z.number().nullable(),
  createdAt: z.number(),
  updatedAt: z.number(),
  profile: userProfileSchema,
  applicationId: z.string().nullable(),
  isSuspended: z.boolean(),
  hasPassword: z.boolean(),
});

export type User = z.output<typeof userSchema>;

/** `GET /users/:userId` with `includePasswordHash` and `includeSsoIdentities`: only what was asked for is added. */
export const detailedUserSchema = userSchema.extend({
  passwordDigest: z.string().nullable().optional(),
  passwordAlgorithm: z.enum(passwordAlgorithms).nullable().optional(),
  ssoIdentities: z.array(z.record(z.string(), z.unknown())).optional(),
});

const avatar = z.url({ protocol: /^https?$/ }).max(2048);

export const createUserBody = z.strictObject({
  username: username.optional(),
  primaryEmail: email.optional(),
  primaryPhone: phone.optional(),
  password: z.string().min(1).max(256).optional(),
  /** A digest brought from another system, checked at the user's next sign-in and replaced by ours. */
  passwordDigest: z.string().min(1).max(256).optional(),
  passwordAlgorithm: z.enum(passwordAlgorithms).optional(),
  name: z.string().max(128).optional(),
  avatar: avatar.nullable().optional(),
  customData: customDataInput.optional(),
  profile: userProfileSchema.optional(),
});

export const updateUserBody = z.strictObject({
  username: username.nullable().optional(),
  primaryEmail: email.nullable().optional(),
  primaryPhone: phone.nullable().optional(),
  name: z.string().max(128).nullable().optional(),
  avatar: avatar.nullable().optional(),
  customData: customDataInput.optional(),
  profile: userProfileSchema.optional(),
});
