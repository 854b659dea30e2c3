import { z } from 'zod';

import { applicationTypes, customClientMetadataSchema, oidcClientMetadataSchema } from '../applications/schemas.ts';
import { connectorFactories, connectorMetadata, type FactoryId, factoryIds } from '../connectors/schemas.ts';
import { phraseLanguageTagSchema, translationSchema } from '../custom-phrases/schemas.ts';
import { deliveryFieldsInput, hookConfigSchema, subscribableEventSchema } from '../hooks/schemas.ts';
import { languageTagSchema, templateDetailsSchema, templateTypeSchema } from '../messages/email-template-schemas.ts';
import { consentUserScopes } from '../oidc/consent-scopes/consent-scope-schemas.ts';
import {
  customCssMaxLength,
  emailDomain,
  organizationBrandingSchema,
  organizationColorSchema,
  organizationRoleTypes,
} from '../organizations/schemas.ts';
import { accessTokenTtl, resourceIndicator, scopeName } from '../resources/schemas.ts';
import { roleTypes } from '../roles/schemas.ts';
import { consoleApp } from '../shared/console-ids.ts';
import { entityId as id } from '../shared/entity-id.ts';
import { managementApi } from '../shared/management-api.ts';
import { accountCenterSchema } from '../sign-in-experience/account-center/account-center-schemas.ts';
import { captchaConfigSchema } from '../sign-in-experience/captcha/captcha-schemas.ts';
import { signInExperienceSchema } from '../sign-in-experience/schemas.ts';
import { providerNames, ssoConfigSchema } from '../sso/schemas.ts';
import { trustedIssuerFields } from '../trusted-issuers/schemas.ts';

/**
 * The configuration file `npm run cli -- export` writes and `import` applies: what an operator sets
 * up, not what users do (no users, sessions, tokens, logs, signing keys). Field names are the
 * management API's; ids are kept, so references between entries hold in any database.
 */
export const formatVersion = 1;

/**
 * Rows every database has (migrations seed them, start-up keeps them in line with the
 * configuration): not exported, and an import that names them is refused. References to them
 * (an application holding the management API role, a role granting its scope) are exported.
 */
export const builtIn = {
  applicationIds: new Set<string>([consoleApp.applicationId]),
  resourceIds: new Set<string>([managementApi.resourceId]),
  scopeIds: new Set<string>([managementApi.scopeId]),
  roleIds: new Set<string>([managementApi.roleId, consoleApp.roleId]),
};

/** The secret kept out of a connector's configuration unless secrets are asked for. */
export const connectorSecretField = 'clientSecret';
/** Stands in for a connector secret left out of the file while the rest of its configuration is checked. */
const absentSecret = 'absent-from-the-file';

const applicationId = z.string().min(1).max(64);
const createdAt = z.number().int().min(0);
const jsonObject = z.record(z.string(), z.unknown());
const ids = (item: z.ZodString) => z.array(item).max(10_000);
const description = z.string().max(4096).nullable();
/** A secret, present only in a file exported with `--with-secrets`. */
const secret = z.string().min(1).max(512).optional();

const scope = z.strictObject({ id, name: scopeName, description, createdAt });

const resource = z.strictObject({
  id,
  name: z.string().min(1).max(256),
  indicator: resourceIndicator,
  isDefault: z.boolean(),
  accessTokenTtl,
  isExchangeTarget: z.boolean(),
  createdAt,
  scopes: z.array(scope).max(10_000),
});

const role = z.strictObject({
  id,
  name: z.string().min(1).max(128),
  description: z.string().min(1).max(4096),
  type: z.enum(roleTypes),
  isDefault: z.boolean(),
  createdAt,
  scopeIds: ids(id),
});

const application = z.strictObject({
  id: applicationId,
  name: z.string().min(1).max(256),
  description,
  type: z.enum(applicationTypes),
  secret,
  oidcClientMetadata: oidcClientMetadataSchema,
  customClientMetadata: customClientMetadataSchema,
  customData: jsonObject,
  isThirdParty: z.boolean(),
  createdAt,
  roleIds: ids(id),
});

const organizationScope = z.strictObject({ id, name: z.string().min(1).max(128), description, createdAt });

const organizationRole = z.strictObject({
  id,
  name: z.string().min(1).max(128),
  description,
  type: z.enum(organizationRoleTypes),
  createdAt,
  organizationScopeIds: ids(id),
  resourceScopeIds: ids(id),
});

const organization = z.strictObject({
  id,
  name: z.string().min(1).max(128),
  description,
  customData: jsonObject,
  isMfaRequired: z.boolean(),
  /** Optional: files exported before organizations had them import as none. */
  color: organizationColorSchema.optional(),
  branding: organizationBrandingSchema.optional(),
  customCss: z.string().max(customCssMaxLength).nullable().optional(),
  createdAt,
  /** Member applications and their organization roles (user members are not configuration). */
  applications: z.array(z.strictObject({ id: applicationId, organizationRoleIds: ids(id) })).max(10_000),
  /** Just-in-time provisioning: who joins on sign-in (by verified email domain, by SSO connector), with which roles. */
  jit: z.strictObject({
    emailDomains: z.array(emailDomain).max(1000),
    organizationRoleIds: ids(id),
    ssoConnectorIds: ids(id),
  }),
});

/**
 * A hook, with its delivery settings (left out by files from before them: defaults). The Ed25519
 * private key travels as a secret, like `signingKey`; a rotation's overlap does not travel.
 */
const hook = z.strictObject({
  id,
  name: z.string().max(256),
  events: z.array(subscribableEventSchema).min(1).max(100),
  config: hookConfigSchema,
  enabled: z.boolean(),
  disabledReason: z.string().max(512).nullable().optional(),
  ...deliveryFieldsInput,
  signingKey: secret,
  signingPrivateKey: z.string().min(1).max(1024).optional(),
  createdAt,
});

/** A trust policy for an outside issuer (the users it made just in time are user data: not exported). */
const trustedIssuer = z.strictObject({ id, ...trustedIssuerFields, createdAt });

/** The operator's texts of one language, in place of the catalogue's. */
const customPhrase = z.strictObject({ id, languageTag: phraseLanguageTagSchema, translation: translationSchema });

const emailTemplate = z.strictObject({
  id,
  languageTag: languageTagSchema,
  templateType: templateTypeSchema,
  details: templateDetailsSchema,
  createdAt,
});

/** A named client secret of an application; its value travels as a secret, like the application's own. */
/** A third-party application's user consent scopes (`/applications/:id/user-consent-scopes`). */
const applicationConsentScopes = z.strictObject({
  applicationId,
  organizationScopeIds: ids(id),
  resourceScopeIds: ids(id),
  organizationResourceScopeIds: ids(id),
  userScopes: z.array(z.enum(consentUserScopes)).max(consentUserScopes.length),
});

const applicationSecret = z.strictObject({
  id,
  applicationId,
  name: z.string().min(1).max(256),
  value: secret,
  createdAt,
  expiresAt: z.number().int().min(0).nullable(),
});

/** A configuration checked as the API checks it, its secret (when left out) apart. */
const withSecretChecked = (
  schema: z.ZodType,
  config: Record<string, unknown>,
  context: z.RefinementCtx,
  path: string,
  secretField = connectorSecretField,
) => {
  const result = schema.safeParse({ ...config, [secretField]: config[secretField] ?? absentSecret });
  for (const issue of result.error?.issues ?? []) {
    context.addIssue({ code: 'custom', message: issue.message, path: [path, ...issue.path.map(String)] });
  }
};

const connector = z
  .strictObject({
    id,
    connectorId: z.enum(factoryIds as [FactoryId, ...FactoryId[]]),
    target: z.string().min(1).max(64),
    config: jsonObject,
    metadata: connectorMetadata,
    syncProfile: z.boolean(),
    createdAt,
  })
  .superRefine((value, context) =>
    withSecretChecked(connectorFactories[value.connectorId].config, value.config, context, 'config'),
  );

const ssoConnector = z
  .strictObject({
    id,
    providerName: z.enum(providerNames),
    connectorName: z.string().min(1).max(128),
    /** Empty until an administrator configures it. */
    config: jsonObject,
    domains: z.array(z.string().min(1).max(128)).max(100),
    branding: jsonObject,
    syncProfile: z.boolean(),
    createdAt,
  })
  .superRefine((value, context) => {
    if (Object.keys(value.config).length > 0) {
      withSecretChecked(ssoConfigSchema, value.config, context, 'config');
    }
  });

const accountCenterSettings = accountCenterSchema.pick({ enabled: true, fields: true }).strict();

/** The secret kept out of the captcha provider's configuration unless secrets are asked for. */
export const captchaSecretField = 'secretKey';

/** The captcha provider: one at most, as the API keeps it. */
const captchaProvider = z
  .strictObject({ id, config: jsonObject, createdAt })
  .superRefine((value, context) =>
    withSecretChecked(captchaConfigSchema, value.config, context, 'config', captchaSecretField),
  );

export const configFileSchema = z.strictObject({
  version: z.literal(formatVersion),
  resources: z.array(resource),
  roles: z.array(role),
  applications: z.array(application),
  // The lists below `applications` and `hooks` are optional: files exported before them import as none.
  applicationSecrets: z.array(applicationSecret).optional(),
  organizationScopes: z.array(organizationScope),
  organizationRoles: z.array(organizationRole),
  applicationConsentScopes: z.array(applicationConsentScopes).optional(),
  ssoConnectors: z.array(ssoConnector),
  connectors: z.array(connector),
  organizations: z.array(organization),
  hooks: z.array(hook),
  trustedIssuers: z.array(trustedIssuer).optional(),
  customPhrases: z.array(customPhrase).optional(),
  emailTemplates: z.array(emailTemplate).optional(),
  /** Absent in files from before it travelled: the account center is then left as it is. */
  accountCenter: accountCenterSettings.optional(),
  captchaProviders: z.array(captchaProvider).max(1).optional(),
  // A file exported before a setting existed still imports: the defaults fill what it lacks.
  signInExperience: signInExperienceSchema.partial(),
});

/**
 * The file as written: an import checks it with the schema, then writes the values as they were
 * given (not as the schema would rewrite them), so that an import reproduces what an export read.
 */
export type ConfigFile = z.input<typeof configFileSchema>;
