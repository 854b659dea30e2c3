import { z } from 'zod';

import { customDataInput } from '../http/limits.ts';

export const applicationTypes = ['Native', 'SPA', 'Traditional', 'MachineToMachine'] as const;
export type ApplicationType = (typeof applicationTypes)[number];

/** Confidential clients authenticate with their secret; only they may exchange tokens. */
export const confidentialTypes: ReadonlySet<ApplicationType> = new Set(['Traditional', 'MachineToMachine']);

const hasNoFragment = (value: string) => {
  try {
    const url = new URL(value);
    return url.hash === '' && !value.includes('#');
  } catch {
    return false;
  }
};

/** Absolute, no fragment (RFC 6749 §3.1.2); native apps may use private-use schemes (RFC 8252 §7.1). */
const redirectUri = z.string().max(2048).refine(hasNoFragment, 'must be an absolute URI without a fragment');
const httpUrl = z.url({ protocol: /^https?$/ }).max(2048);
const origin = z
  .string()
  .max(2048)
  .refine(
    (value) => URL.canParse(value) && new URL(value).origin === value,
    'must be an origin such as https://app.example.com',
  );

export const oidcClientMetadataSchema = z.strictObject({
  redirectUris: z.array(redirectUri).max(100),
  postLogoutRedirectUris: z.array(redirectUri).max(100),
  backchannelLogoutUri: httpUrl.optional(),
  backchannelLogoutSessionRequired: z.boolean().optional(),
  logoUri: httpUrl.optional(),
});

/** Seconds: the longest `idTokenTtl` (Logto's bound); a retired signing key stays published this long. */
export const longestIdTokenTtl = 86_400;

export const customClientMetadataSchema = z.strictObject({
  corsAllowedOrigins: z.array(origin).max(100).optional(),
  idTokenTtl: z.number().int().min(60).max(longestIdTokenTtl).optional(),
  refreshTokenTtl: z.number().int().min(60).max(7_776_000).optional(),
  refreshTokenTtlInDays: z.number().int().min(1).max(90).optional(),
  tenantId: z.string().max(64).optional(),
  alwaysIssueRefreshToken: z.boolean().optional(),
  rotateRefreshToken: z.boolean().optional(),
  allowTokenExchange: z.boolean().optional(),
  /** Which applications may act for this application's users in a token exchange (docs/token-exchange.md). */
  delegation: z.strictObject({ allowedActorClientIds: z.array(z.string().min(1).max(64)).max(100) }).optional(),
  isDeviceFlow: z.boolean().optional(),
  maxAllowedGrants: z.number().int().min(1).optional(),
});

export type OidcClientMetadata = z.output<typeof oidcClientMetadataSchema>;
export type CustomClientMetadata = z.output<typeof customClientMetadataSchema>;

const jsonObject = z.record(z.string(), z.unknown());

export const createApplicationBody = z.strictObject({
  name: z.string().min(1).max(256),
  description: z.string().max(4096).nullable().optional(),
  type: z.enum(applicationTypes),
  oidcClientMetadata: oidcClientMetadataSchema.optional(),
  customClientMetadata: customClientMetadataSchema.optional(),
  customData: customDataInput.optional(),
  isThirdParty: z.boolean().optional(),
});

export const updateApplicationBody = z.strictObject({
  name: z.string().min(1).max(256).optional(),
  description: z.string().max(4096).nullable().optional(),
  oidcClientMetadata: oidcClientMetadataSchema.partial().optional(),
  customClientMetadata: customClientMetadataSchema.optional(),
  customData: customDataInput.optional(),
  /** Logto's (deprecated) switch for the management API's role; machine-to-machine applications only. */
  isAdmin: z.boolean().optional(),
});

/**
 * What `applications.secret` holds once its legacy secret is deleted (Logto's prefix): a random
 * value the provider compares when no named secret was presented, never shown, never given out.
 */
export const internalSecretPrefix = 'internal_';

export const applicationSchema = z.object({
  tenantId: z.string(),
  id: z.string(),
  name: z.string(),
  /** The legacy secret (Logto's), absent once deleted: the named secrets (`/secrets`) remain. */
  secret: z.string().optional(),
  description: z.string().nullable(),
  type: z.enum(applicationTypes),
  oidcClientMetadata: oidcClientMetadataSchema,
  customClientMetadata: customClientMetadataSchema,
  protectedAppMetadata: z.null(),
  customData: jsonObject,
  isThirdParty: z.boolean(),
  appLevelAccessControlEnabled: z.boolean(),
  createdAt: z.number(),
});

export type Application = z.output<typeof applicationSchema>;

export const applicationSecretSchema = z.object({
  tenantId: z.string(),
  applicationId: z.string(),
  name: z.string(),
  value: z.string(),
  createdAt: z.number(),
  expiresAt: z.number().nullable(),
});

export type ApplicationSecret = z.output<typeof applicationSecretSchema>;
