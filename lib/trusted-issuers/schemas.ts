import { z } from 'zod';

import { idpEndpoint } from '../connectors/schemas.ts';

/**
 * Asymmetric JWS algorithms only: a shared secret (HS*) would be a secret we hold for the outside
 * issuer, and `none` proves nothing.
 */
export const outsideAlgorithms = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
] as const;

/** Without `algorithms`, the usual ones of identity providers. */
const defaultAlgorithms: Array<(typeof outsideAlgorithms)[number]> = ['RS256', 'ES256'];

/**
 * How an outside token's subject becomes one of our users: the value of `claim` is looked up as
 * the id of a social or SSO identity at `connectorId` (`identity`), as a user's primary email
 * (`email`: a verified email only, see user-mapping.ts), or, `jit`, as the subject of a user made for
 * this issuer on first sight. `verifiedEmailClaim` names a claim this issuer fills only with an
 * email it verified: read in place of `email` and `email_verified` (by email, and for the email a
 * user made just in time gets).
 */
export const userMappingSchema = z
  .strictObject({
    claim: z.enum(['sub', 'email']),
    by: z.enum(['identity', 'email', 'jit']),
    connectorId: z.string().min(1).max(128).optional(),
    verifiedEmailClaim: z
      .string()
      .max(64)
      .regex(/^[\w.:-]{1,64}$/, 'a claim name: letters, digits, _ . : -, at most 64')
      .optional(),
  })
  .refine((mapping) => mapping.by !== 'identity' || mapping.connectorId !== undefined, {
    message: 'connectorId is required when users are found by identity',
    path: ['connectorId'],
  })
  .refine((mapping) => mapping.by !== 'email' || mapping.claim === 'email', {
    message: 'users found by email are found by the email claim (claim: "email")',
    path: ['claim'],
  })
  .refine((mapping) => mapping.by !== 'identity' || mapping.verifiedEmailClaim === undefined, {
    message: 'verifiedEmailClaim is read only when users are found by email or made just in time',
    path: ['verifiedEmailClaim'],
  });

export type UserMapping = z.output<typeof userMappingSchema>;

/** A policy's fields as the API checks them (the configuration file checks them alike). */
export const trustedIssuerFields = {
  name: z.string().min(1).max(128),
  // Compared with the token's `iss` exactly, as RFC 7519 compares strings.
  issuer: idpEndpoint.max(255),
  jwksUri: idpEndpoint,
  audience: z.string().min(1).max(255),
  algorithms: z.array(z.enum(outsideAlgorithms)).min(1).max(outsideAlgorithms.length),
  userMapping: userMappingSchema,
  applicationIds: z.array(z.string().min(1).max(64)).max(100),
};

export const createTrustedIssuerBody = z.strictObject({
  ...trustedIssuerFields,
  algorithms: trustedIssuerFields.algorithms.default(defaultAlgorithms),
});

export const updateTrustedIssuerBody = z.strictObject({
  name: trustedIssuerFields.name.optional(),
  issuer: trustedIssuerFields.issuer.optional(),
  jwksUri: trustedIssuerFields.jwksUri.optional(),
  audience: trustedIssuerFields.audience.optional(),
  algorithms: trustedIssuerFields.algorithms.optional(),
  userMapping: trustedIssuerFields.userMapping.optional(),
  applicationIds: trustedIssuerFields.applicationIds.optional(),
});

export const trustedIssuerSchema = z.object({
  id: z.string(),
  name: z.string(),
  issuer: z.string(),
  jwksUri: z.string(),
  audience: z.string(),
  algorithms: z.array(z.enum(outsideAlgorithms)),
  userMapping: z.object({
    claim: z.enum(['sub', 'email']),
    by: z.enum(['identity', 'email', 'jit']),
    connectorId: z.string().optional(),
    verifiedEmailClaim: z.string().optional(),
  }),
  applicationIds: z.array(z.string()),
  createdAt: z.number(),
});

export type TrustedIssuer = z.output<typeof trustedIssuerSchema>;
