import { z } from 'zod';

import { RequestError } from '../http/errors.ts';
import { boundedRecord, foreignJsonInput } from '../http/limits.ts';

import type { IdpSettings } from './external-idp.ts';

// Plain http only to this machine (a development IdP): a code, a client secret and tokens cross it.
const loopbackHosts = new Set(['localhost', '127.0.0.1', '[::1]']);

/** An IdP address: https, or http on a loopback host. */
export const idpEndpoint = z
  .url({ protocol: /^https?$/ })
  .max(2048)
  // Zod runs refinements after a failed check too: a value that is no http URL is the check's to report.
  .refine(
    (value) =>
      !URL.canParse(value) || new URL(value).protocol !== 'http:' || loopbackHosts.has(new URL(value).hostname),
    'must be https (plain http only on localhost)',
  );

const secret = z.string().min(1).max(512);
const authMethod = z.enum(['client_secret_post', 'client_secret_basic']).default('client_secret_post');

/**
 * Connector configurations. Unknown keys are dropped rather than refused: Logto's clients send
 * settings of its own connectors (e.g. `responseType`) that mean nothing here.
 */
export const oidcConnectorConfig = z
  .object({
    issuer: idpEndpoint,
    authorizationEndpoint: idpEndpoint.optional(),
    tokenEndpoint: idpEndpoint.optional(),
    userInfoEndpoint: idpEndpoint.optional(),
    jwksUri: idpEndpoint.optional(),
    clientId: z.string().min(1).max(256),
    clientSecret: secret,
    scope: z
      .string()
      .max(1024)
      .default('openid profile email')
      .refine((scope) => scope.split(' ').includes('openid'), 'must include `openid`'),
    tokenEndpointAuthMethod: authMethod,
    trustUnverifiedEmail: z.boolean().default(false),
  })
  .refine(
    (config) => !config.authorizationEndpoint || (config.tokenEndpoint && config.jwksUri),
    'with `authorizationEndpoint`, give `tokenEndpoint` and `jwksUri` too (or only `issuer`, for discovery)',
  );

export const oauth2ConnectorConfig = z.object({
  authorizationEndpoint: idpEndpoint,
  tokenEndpoint: idpEndpoint,
  userInfoEndpoint: idpEndpoint,
  clientId: z.string().min(1).max(256),
  clientSecret: secret,
  scope: z.string().max(1024).default(''),
  tokenEndpointAuthMethod: authMethod,
  trustUnverifiedEmail: z.boolean().default(false),
  profileMap: z
    .object({
      id: z.string().min(1).max(128).optional(),
      email: z.string().min(1).max(128).optional(),
      phone: z.string().min(1).max(128).optional(),
      name: z.string().min(1).max(128).optional(),
      avatar: z.string().min(1).max(128).optional(),
    })
    .default({}),
});

export type OidcConnectorConfig = z.output<typeof oidcConnectorConfig>;
export type OAuth2ConnectorConfig = z.output<typeof oauth2ConnectorConfig>;

/** The social connector kinds (Logto's "connector factories") with what configures each. */
export const connectorFactories = {
  oidc: {
    config: oidcConnectorConfig,
    name: 'OpenID Connect',
    description: 'Sign in with any OpenID Connect provider (discovery from its issuer, or explicit endpoints).',
  },
  oauth2: {
    config: oauth2ConnectorConfig,
    name: 'OAuth 2.0',
    description: 'Sign in with a plain OAuth 2.0 server: authorization code, then its userinfo endpoint.',
  },
} as const;

export type FactoryId = keyof typeof connectorFactories;
export const factoryIds = Object.keys(connectorFactories) as FactoryId[];

export const idpSettingsOf = (factoryId: FactoryId, config: Record<string, unknown>): IdpSettings =>
  factoryId === 'oidc'
    ? { kind: 'oidc', ...(config as OidcConnectorConfig) }
    : { kind: 'oauth2', ...(config as OAuth2ConnectorConfig) };

export const connectorMetadata = z.strictObject({
  target: z
    .string()
    .max(64)
    .regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, 'lower-case letters, digits, `-` and `_`')
    .optional(),
  /** By locale. */
  name: boundedRecord(z.string().max(64), z.string().max(128), 100).optional(),
  logo: z.string().max(2048).optional(),
  logoDark: z.string().max(2048).nullable().optional(),
});

export type ConnectorMetadata = z.output<typeof connectorMetadata>;

export const createConnectorBody = z.strictObject({
  connectorId: z.enum(factoryIds as [FactoryId, ...FactoryId[]]),
  config: foreignJsonInput,
  metadata: connectorMetadata.optional(),
  syncProfile: z.boolean().optional(),
  enableTokenStorage: z.literal(false).optional(),
  id: z.string().min(1).max(21).optional(),
});

export const updateConnectorBody = z.strictObject({
  config: foreignJsonInput.optional(),
  metadata: connectorMetadata.optional(),
  syncProfile: z.boolean().optional(),
  enableTokenStorage: z.literal(false).optional(),
});

export const connectorSchema = z.object({
  id: z.string(),
  connectorId: z.string(),
  target: z.string(),
  type: z.literal('Social'),
  name: z.record(z.string(), z.string()),
  description: z.record(z.string(), z.string()),
  logo: z.string(),
  logoDark: z.string().nullable(),
  readme: z.string(),
  platform: z.literal('Universal'),
  isStandard: z.boolean(),
  config: z.record(z.string(), z.unknown()),
  metadata: connectorMetadata,
  syncProfile: z.boolean(),
  enableTokenStorage: z.boolean(),
});

export type Connector = z.output<typeof connectorSchema>;

/** Checks a connector configuration: 400 `connector.invalid_config`, saying what is wrong where. */
export function parseConnectorConfig<S extends z.ZodType>(schema: S, config: Record<string, unknown>): z.output<S> {
  const result = schema.safeParse(config);
  if (!result.success) {
    throw new RequestError('connector.invalid_config', {
      details: result.error.issues.map((issue) => ({
        in: 'body',
        path: ['config', ...issue.path].join('.'),
        message: issue.message,
      })),
    });
  }
  return result.data;
}
