import { z } from 'zod';

import { RequestError } from '../http/errors.ts';
import { boundedRecord, foreignJsonInput } from '../http/limits.ts';
import { entityId } from '../shared/entity-id.ts';
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

/** A duration as jose takes one: seconds, or a number with a unit ("30s", "5 min", "1h"). */
const timeSpan = z.union([
  z.number().int().min(0).max(86_400),
  z
    .string()
    .max(32)
    .regex(/^\d+ ?(s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?)$/i, 'seconds, or a number and s, m or h'),
]);

const jwsAlgorithms = [
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

/**
 * Logto's `idTokenVerificationConfig`: where the IdP's signing keys are, and jose's verify options.
 * The audience is always the client id (Logto overrides it so too); unknown options are dropped.
 */
const idTokenVerificationConfig = z.object({
  jwksUri: idpEndpoint,
  issuer: z.union([z.string().min(1).max(2048), z.array(z.string().min(1).max(2048)).min(1).max(10)]).optional(),
  algorithms: z.array(z.enum(jwsAlgorithms)).min(1).max(jwsAlgorithms.length).optional(),
  clockTolerance: timeSpan.optional(),
  maxTokenAge: timeSpan.optional(),
});

const authParam = z.string().max(1024);

/** Parameters of the authorization request that the sign-in itself sets: a connector cannot override them. */
const protocolParams = new Set([
  'client_id',
  'redirect_uri',
  'response_type',
  'response_mode',
  'scope',
  'state',
  'nonce',
  'code_challenge',
  'code_challenge_method',
  'request',
  'request_uri',
]);

/**
 * Connector configurations. Unknown keys are dropped rather than refused: Logto's clients send
 * settings of its own connectors that mean nothing here.
 *
 * OpenID Connect in two shapes, as Logto takes them: an `issuer` (endpoints found by discovery), or
 * explicit `authorizationEndpoint`, `tokenEndpoint` and the ID token's keys
 * (`idTokenVerificationConfig.jwksUri`, or `jwksUri`), with `userInfoEndpoint` optional. `openid`
 * is added to a `scope` without it.
 */
export const oidcConnectorConfig = z
  .object({
    issuer: idpEndpoint.optional(),
    authorizationEndpoint: idpEndpoint.optional(),
    tokenEndpoint: idpEndpoint.optional(),
    userInfoEndpoint: idpEndpoint.optional(),
    jwksUri: idpEndpoint.optional(),
    idTokenVerificationConfig: idTokenVerificationConfig.optional(),
    clientId: z.string().min(1).max(256),
    clientSecret: secret,
    scope: z.string().max(1024).default('openid profile email'),
    // Logto's fixed values: the authorization code flow is the only one.
    responseType: z.literal('code').optional(),
    grantType: z.literal('authorization_code').optional(),
    authRequestOptionalConfig: z
      .object({
        // The callback page reads the query: other response modes would not reach it.
        responseMode: z.literal('query'),
        display: authParam,
        prompt: authParam,
        maxAge: authParam,
        uiLocales: authParam,
        idTokenHint: z.string().max(4096),
        loginHint: authParam,
        acrValues: authParam,
      })
      .partial()
      .optional(),
    customConfig: boundedRecord(z.string().min(1).max(64), authParam, 20)
      .refine(
        (params) => !Object.keys(params).some((key) => protocolParams.has(key)),
        `must not set ${[...protocolParams].join(', ')}`,
      )
      .optional(),
    tokenEndpointAuthMethod: authMethod,
    trustUnverifiedEmail: z.boolean().default(false),
    /** Take `"true"` as true in `email_verified` (some IdPs send strings). */
    acceptStringTypedBooleanClaims: z.boolean().optional(),
  })
  .superRefine((config, context) => {
    if (!config.authorizationEndpoint) {
      if (!config.issuer) {
        context.addIssue({
          code: 'custom',
          path: ['issuer'],
          message:
            'give `issuer` (discovery), or `authorizationEndpoint`, `tokenEndpoint` and `idTokenVerificationConfig.jwksUri`',
        });
      }
      return;
    }
    if (!config.tokenEndpoint) {
      context.addIssue({ code: 'custom', path: ['tokenEndpoint'], message: 'required with `authorizationEndpoint`' });
    }
    if (!config.jwksUri && !config.idTokenVerificationConfig) {
      context.addIssue({
        code: 'custom',
        path: ['idTokenVerificationConfig', 'jwksUri'],
        message: "required with `authorizationEndpoint`: where the ID token's signing keys are",
      });
    }
  });

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

/** A scope with `openid` (added when missing, as Logto does; Logto's scopes may be separated by `+`). */
const withOpenid = (scope: string) => {
  const scopes = scope.split(/[ +]/).filter(Boolean);
  return (scopes.includes('openid') ? scopes : [...scopes, 'openid']).join(' ');
};

const authRequestParams = {
  responseMode: 'response_mode',
  display: 'display',
  prompt: 'prompt',
  maxAge: 'max_age',
  uiLocales: 'ui_locales',
  idTokenHint: 'id_token_hint',
  loginHint: 'login_hint',
  acrValues: 'acr_values',
} as const;

function oidcSettingsOf(config: OidcConnectorConfig): IdpSettings {
  const { idTokenVerificationConfig: verification, authRequestOptionalConfig = {}, customConfig = {} } = config;
  return {
    kind: 'oidc',
    issuer: config.issuer,
    authorizationEndpoint: config.authorizationEndpoint,
    tokenEndpoint: config.tokenEndpoint,
    userInfoEndpoint: config.userInfoEndpoint,
    jwksUri: verification?.jwksUri ?? config.jwksUri,
    idToken: verification && {
      issuer: verification.issuer,
      algorithms: verification.algorithms,
      clockTolerance: verification.clockTolerance,
      maxTokenAge: verification.maxTokenAge,
    },
    acceptStringBooleans: config.acceptStringTypedBooleanClaims === true,
    authorizationParams: {
      ...customConfig,
      ...Object.fromEntries(
        Object.entries(authRequestOptionalConfig).map(([key, value]) => [
          authRequestParams[key as keyof typeof authRequestParams],
          value,
        ]),
      ),
    },
    clientId: config.clientId,
    clientSecret: config.clientSecret,
    scope: withOpenid(config.scope),
    tokenEndpointAuthMethod: config.tokenEndpointAuthMethod,
    trustUnverifiedEmail: config.trustUnverifiedEmail,
  };
}

/** How to sign in with a stored connector's configuration (checked by its schema when it was saved). */
export const idpSettingsOf = (factoryId: FactoryId, config: Record<string, unknown>): IdpSettings =>
  factoryId === 'oidc'
    ? oidcSettingsOf(config as OidcConnectorConfig)
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
  id: entityId.optional(),
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
    const details = result.error.issues.map((issue) => ({
      in: 'body',
      path: ['config', ...issue.path].join('.'),
      message: issue.message,
    }));
    const [first] = details;
    throw new RequestError(
      'connector.invalid_config',
      { reason: `The connector configuration is invalid at \`${first.path}\`: ${first.message.replace(/\.$/, '')}.` },
      { details },
    );
  }
  return result.data;
}
