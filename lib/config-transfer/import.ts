import type { Knex } from 'knex';

import { confidentialTypes, type ApplicationType } from '../applications/schemas.ts';
import { newEd25519Key } from '../hooks/signing-keys.ts';
import { ConfigError } from '../config/env.ts';
import { unknownKeys, type Translation } from '../shared/phrases/index.ts';
import { defaultSignInExperience } from '../sign-in-experience/schemas.ts';
import { saveSignInExperience } from '../sign-in-experience/sign-in-experience.ts';
import { managementApi } from '../shared/management-api.ts';
import { isUniqueViolation, type Queryable } from '../storage/database.ts';
import { generateSecret } from '../storage/ids.ts';
import { sealConfigSecret, sealSecret, sealedColumns } from '../storage/sealed-columns.ts';
import { bumpCacheVersion, type CacheName } from '../storage/shared-cache.ts';
import { withTransaction } from '../storage/transaction.ts';
import { builtIn, configFileSchema, connectorSecretField, type ConfigFile } from './file.ts';
import type { ConfigTable, Row } from './tables.ts';

export type ImportReport = {
  created: number;
  updated: number;
  /** What the operator must still do: secrets generated or missing because the file had none. */
  notes: string[];
};

/** At most this many problems are listed: a file that is wrong everywhere is wrong. */
const problemsShown = 20;

function refuse(source: string, problems: string[]): never {
  const shown = problems.slice(0, problemsShown).map((problem) => `  ${problem}`);
  const more = problems.length > problemsShown ? [`  ... and ${problems.length - problemsShown} more`] : [];
  throw new ConfigError(
    [`${source} is not a configuration this service can import; nothing was changed:`, ...shown, ...more].join('\n'),
  );
}

const pathOf = (path: readonly PropertyKey[]) =>
  path
    .map((part) => (typeof part === 'number' ? `[${part}]` : `.${String(part)}`))
    .join('')
    .replace(/^\./, '');

/**
 * What is wrong with a file, as lines naming where: its shape (the schema), then what can be checked
 * without a database (ids given twice, built-in rows, two default resources).
 */
export function configFileProblems(value: unknown): string[] {
  const result = configFileSchema.safeParse(value);
  if (!result.success) {
    return result.error.issues.map((issue) => `${pathOf(issue.path) || '(the file)'}: ${issue.message}`);
  }
  const file = value as ConfigFile;
  const scopes = file.resources.flatMap((resource) => resource.scopes);
  return [
    ...duplicates('resources', file.resources),
    ...duplicates('scopes', scopes),
    ...duplicates('roles', file.roles),
    ...duplicates('applications', file.applications),
    ...duplicates('organizationScopes', file.organizationScopes),
    ...duplicates('organizationRoles', file.organizationRoles),
    ...duplicates('ssoConnectors', file.ssoConnectors),
    ...duplicates('connectors', file.connectors),
    ...duplicates('organizations', file.organizations),
    ...duplicates('hooks', file.hooks),
    ...duplicates('applicationSecrets', file.applicationSecrets ?? []),
    ...duplicates('trustedIssuers', file.trustedIssuers ?? []),
    ...duplicates('customPhrases', file.customPhrases ?? []),
    ...duplicates('emailTemplates', file.emailTemplates ?? []),
    ...builtInEntries('resources', file.resources, builtIn.resourceIds),
    ...builtInEntries('scopes', scopes, builtIn.scopeIds),
    ...builtInEntries('roles', file.roles, builtIn.roleIds),
    ...builtInEntries('applications', file.applications, builtIn.applicationIds),
    ...(file.applicationSecrets ?? [])
      .filter(({ applicationId }) => builtIn.applicationIds.has(applicationId))
      .map(({ id, applicationId }) => `applicationSecrets: ${id} belongs to ${applicationId}, which is built in`),
    // As the API refuses them: a custom phrase only replaces a text the catalogue has.
    ...(file.customPhrases ?? []).flatMap(({ languageTag, translation }, index) =>
      unknownKeys(translation as Translation)
        .slice(0, 5)
        .map((key) => `customPhrases[${index}] (${languageTag}).${key}: is not a phrase of the catalogue`),
    ),
    ...(file.resources.filter((resource) => resource.isDefault).length > 1
      ? ['resources: at most one is the default (isDefault)']
      : []),
  ];
}

/** Reads a file's text, refusing (ConfigError, every problem named) one that is not JSON or has problems. */
export function parseConfigFile(text: string, source: string): ConfigFile {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    refuse(source, [`not JSON: ${(error as Error).message}`]);
  }
  const problems = configFileProblems(value);
  if (problems.length > 0) {
    refuse(source, problems);
  }
  // Written as given (see ConfigFile): the schema only checked it.
  return value as ConfigFile;
}

function duplicates(list: string, entries: Array<{ id: string }>): string[] {
  const seen = new Set<string>();
  return entries
    .filter(({ id }) => seen.size === seen.add(id).size)
    .map(({ id }) => `${list}: id ${id} appears more than once`);
}

function builtInEntries(list: string, entries: Array<{ id: string }>, ids: Set<string>): string[] {
  return entries
    .filter(({ id }) => ids.has(id))
    .map(({ id }) => `${list}: ${id} is built in (every database has it; it is not imported)`);
}

/** Ids the file refers to that neither it nor the database holds, and assignments the API would refuse. */
async function referenceProblems(trx: Queryable, file: ConfigFile): Promise<string[]> {
  const problems: string[] = [];
  const stored = async (table: ConfigTable, column = 'id') =>
    new Set<string>((await trx(table).pluck(column)).map(String));
  const known = async (table: ConfigTable, inFile: Iterable<string>) => new Set([...(await stored(table)), ...inFile]);

  const scopeIds = await known(
    'scopes',
    file.resources.flatMap((resource) => resource.scopes.map((scope) => scope.id)),
  );
  const roleTypes = new Map<string, string>(
    (await trx('roles').select<Row[]>('id', 'type')).map((row) => [String(row.id), String(row.type)]),
  );
  for (const role of file.roles) {
    roleTypes.set(role.id, role.type);
  }
  const applicationTypes = new Map<string, string>(
    (await trx('applications').select<Row[]>('id', 'type')).map((row) => [String(row.id), String(row.type)]),
  );
  for (const application of file.applications) {
    applicationTypes.set(application.id, application.type);
  }
  const organizationScopeIds = await known(
    'organization_scopes',
    file.organizationScopes.map((scope) => scope.id),
  );
  const organizationRoleTypes = new Map<string, string>(
    (await trx('organization_roles').select<Row[]>('id', 'type')).map((row) => [String(row.id), String(row.type)]),
  );
  for (const role of file.organizationRoles) {
    organizationRoleTypes.set(role.id, role.type);
  }
  const ssoConnectorIds = await known(
    'sso_connectors',
    file.ssoConnectors.map((connector) => connector.id),
  );
  const managementScopeIds = new Set(
    (await trx('scopes').where({ resource_id: managementApi.resourceId }).pluck('id')).map(String),
  );

  const missing = (where: string, what: string, ids: string[], exists: (id: string) => boolean) => {
    for (const id of ids.filter((id) => !exists(id))) {
      problems.push(`${where}: no ${what} ${id} in the file or the database`);
    }
  };
  file.roles.forEach((role, index) => {
    missing(`roles[${index}].scopeIds`, 'scope', role.scopeIds, (id) => scopeIds.has(id));
    if (role.type === 'User' && role.scopeIds.some((id) => managementScopeIds.has(id))) {
      problems.push(`roles[${index}]: a User role cannot hold the management API's scopes`);
    }
  });
  file.applications.forEach((application, index) => {
    missing(`applications[${index}].roleIds`, 'role', application.roleIds, (id) => roleTypes.has(id));
    if (application.roleIds.length > 0 && application.type !== 'MachineToMachine') {
      problems.push(`applications[${index}]: only MachineToMachine applications hold roles`);
    }
    if (application.roleIds.some((id) => roleTypes.has(id) && roleTypes.get(id) !== 'MachineToMachine')) {
      problems.push(`applications[${index}].roleIds: an application holds MachineToMachine roles only`);
    }
  });
  (file.applicationSecrets ?? []).forEach((secret, index) => {
    missing(`applicationSecrets[${index}]`, 'application', [secret.applicationId], (id) => applicationTypes.has(id));
    const type = applicationTypes.get(secret.applicationId) as ApplicationType | undefined;
    if (type !== undefined && !confidentialTypes.has(type)) {
      problems.push(`applicationSecrets[${index}]: only MachineToMachine and Traditional applications have secrets`);
    }
  });
  const connectorIds = new Set([
    ...(await known(
      'social_connectors',
      file.connectors.map((connector) => connector.id),
    )),
    ...ssoConnectorIds,
  ]);
  (file.trustedIssuers ?? []).forEach((policy, index) => {
    missing(`trustedIssuers[${index}].applicationIds`, 'application', policy.applicationIds, (id) =>
      applicationTypes.has(id),
    );
    const { connectorId } = policy.userMapping;
    if (connectorId !== undefined) {
      missing(`trustedIssuers[${index}].userMapping.connectorId`, 'connector', [connectorId], (id) =>
        connectorIds.has(id),
      );
    }
  });
  file.organizationRoles.forEach((role, index) => {
    missing(`organizationRoles[${index}].organizationScopeIds`, 'organization scope', role.organizationScopeIds, (id) =>
      organizationScopeIds.has(id),
    );
    missing(`organizationRoles[${index}].resourceScopeIds`, 'scope', role.resourceScopeIds, (id) => scopeIds.has(id));
  });
  file.organizations.forEach((organization, index) => {
    organization.applications.forEach((member, memberIndex) => {
      const where = `organizations[${index}].applications[${memberIndex}]`;
      missing(where, 'application', [member.id], (id) => applicationTypes.has(id));
      missing(`${where}.organizationRoleIds`, 'organization role', member.organizationRoleIds, (id) =>
        organizationRoleTypes.has(id),
      );
      if (
        member.organizationRoleIds.some(
          (id) => organizationRoleTypes.has(id) && organizationRoleTypes.get(id) !== 'MachineToMachine',
        )
      ) {
        problems.push(`${where}.organizationRoleIds: an application holds MachineToMachine organization roles only`);
      }
    });
    missing(
      `organizations[${index}].jit.organizationRoleIds`,
      'organization role',
      organization.jit.organizationRoleIds,
      (id) => organizationRoleTypes.has(id),
    );
    missing(`organizations[${index}].jit.ssoConnectorIds`, 'SSO connector', organization.jit.ssoConnectorIds, (id) =>
      ssoConnectorIds.has(id),
    );
  });
  return problems;
}

/** What must be unique in each table besides the id: named when an entry collides with another row. */
const uniqueWhat: Partial<Record<ConfigTable, string>> = {
  resources: 'indicator',
  scopes: 'name in its resource',
  roles: 'name',
  organization_scopes: 'name',
  organization_roles: 'name',
  sso_connectors: 'connectorName',
  social_connectors: 'target',
  application_secrets: 'name in its application',
  trusted_issuers: 'issuer',
  custom_phrases: 'languageTag',
  email_templates: 'languageTag and templateType',
};

type Counts = { created: number; updated: number };

/** Creates or updates one row by its id; a collision with another row on a unique column is refused, naming it. */
async function upsert(
  trx: Queryable,
  table: ConfigTable,
  row: Row & { id: string },
  counts: Counts,
  whenNew: Row = {},
): Promise<void> {
  try {
    if (await trx(table).where({ id: row.id }).first('id')) {
      await trx(table).where({ id: row.id }).update(row);
      counts.updated++;
    } else {
      await trx(table).insert({ ...row, ...whenNew });
      counts.created++;
    }
  } catch (error) {
    if (isUniqueViolation(error)) {
      throw new ConfigError(
        `${table} ${row.id}: another row in the database has the same ${uniqueWhat[table] ?? 'key'}; nothing was changed`,
      );
    }
    throw error;
  }
}

/**
 * The secret to write into a row: the file's; for a new row without one, one made here (noted: the
 * operator must hand it out); for a stored row without one, none (it keeps its own).
 */
async function secretToWrite(
  trx: Queryable,
  table: ConfigTable,
  id: string,
  given: string | undefined,
  notes: string[],
  note: string,
  make: () => string = generateSecret,
): Promise<string | undefined> {
  if (given !== undefined) {
    return given;
  }
  if (await trx(table).where({ id }).first('id')) {
    return undefined;
  }
  notes.push(note);
  return make();
}

/** Makes a parent's links exactly the file's. */
async function replaceLinks(trx: Queryable, table: ConfigTable, parent: Row, links: Row[]): Promise<void> {
  await trx(table).where(parent).delete();
  if (links.length > 0) {
    await trx(table).insert(links.map((link) => ({ ...parent, ...link })));
  }
}

/** A connector's stored configuration with the file's secret sealed, or, when the file has none, the stored one kept. */
async function connectorConfig(
  trx: Queryable,
  table: 'social_connectors' | 'sso_connectors',
  id: string,
  config: Record<string, unknown>,
): Promise<{ config: string; secretless: boolean }> {
  const where =
    table === 'social_connectors' ? sealedColumns.socialConnectorSecrets : sealedColumns.ssoConnectorSecrets;
  if (typeof config[connectorSecretField] === 'string') {
    return { config: JSON.stringify(sealConfigSecret(trx, where, id, config)), secretless: false };
  }
  const stored = await trx(table).where({ id }).first<Row | undefined>('config');
  const kept = stored
    ? (JSON.parse(String(stored.config)) as Record<string, unknown>)[connectorSecretField]
    : undefined;
  return {
    // The stored value is sealed for this very row: it is copied as it is.
    config: JSON.stringify(kept === undefined ? config : { ...config, [connectorSecretField]: kept }),
    secretless: kept === undefined && Object.keys(config).length > 0,
  };
}

const caches: CacheName[] = ['applications', 'resources', 'roles', 'hooks', 'connectors', 'settings', 'trustedIssuers'];

/**
 * Applies a checked file in one transaction: every entry is created or updated by its id, and its
 * own lists (a resource's scopes, a role's scopes, an application's roles, an organization's member
 * applications and just-in-time settings) become the file's. Lists files from before them lack
 * (named application secrets, trusted issuers, custom phrases, email templates) are taken as empty. Entries the file does not name are
 * left alone. Nothing is written when a reference cannot be resolved or a row collides. No webhook
 * events and no audit entries: it is an operator's change made with the database's credentials.
 */
export async function importConfiguration(db: Knex, file: ConfigFile, source: string): Promise<ImportReport> {
  return withTransaction(db, async (trx) => {
    const problems = await referenceProblems(trx, file);
    if (problems.length > 0) {
      refuse(source, problems);
    }
    const counts: Counts = { created: 0, updated: 0 };
    const notes: string[] = [];

    for (const resource of file.resources) {
      await upsert(
        trx,
        'resources',
        {
          id: resource.id,
          name: resource.name,
          indicator: resource.indicator,
          is_default: resource.isDefault,
          access_token_ttl: resource.accessTokenTtl,
          is_exchange_target: resource.isExchangeTarget,
          created_at: resource.createdAt,
        },
        counts,
      );
      await trx('scopes')
        .where({ resource_id: resource.id })
        .whereNotIn(
          'id',
          resource.scopes.map((scope) => scope.id),
        )
        .delete();
      for (const scope of resource.scopes) {
        await upsert(
          trx,
          'scopes',
          {
            id: scope.id,
            resource_id: resource.id,
            name: scope.name,
            description: scope.description,
            created_at: scope.createdAt,
          },
          counts,
        );
      }
    }
    const defaultResource = file.resources.find((resource) => resource.isDefault);
    if (defaultResource) {
      await trx('resources').whereNot({ id: defaultResource.id }).update({ is_default: false });
    }

    for (const role of file.roles) {
      await upsert(
        trx,
        'roles',
        {
          id: role.id,
          name: role.name,
          description: role.description,
          type: role.type,
          is_default: role.isDefault,
          created_at: role.createdAt,
        },
        counts,
      );
      await replaceLinks(
        trx,
        'roles_scopes',
        { role_id: role.id },
        [...new Set(role.scopeIds)].map((scopeId) => ({ scope_id: scopeId })),
      );
    }

    for (const application of file.applications) {
      const secret = await secretToWrite(
        trx,
        'applications',
        application.id,
        application.secret,
        notes,
        `application ${application.id} (${application.name}): created with a new secret (the file had none); read it in the console`,
      );
      await upsert(
        trx,
        'applications',
        {
          id: application.id,
          name: application.name,
          description: application.description,
          type: application.type,
          ...(secret === undefined
            ? {}
            : { secret: sealSecret(trx, sealedColumns.applicationSecrets, application.id, secret) }),
          oidc_client_metadata: JSON.stringify(application.oidcClientMetadata),
          custom_client_metadata: JSON.stringify(application.customClientMetadata),
          custom_data: JSON.stringify(application.customData),
          is_third_party: application.isThirdParty,
          created_at: application.createdAt,
        },
        counts,
      );
      await replaceLinks(
        trx,
        'applications_roles',
        { application_id: application.id },
        [...new Set(application.roleIds)].map((roleId) => ({ role_id: roleId })),
      );
    }

    for (const secret of file.applicationSecrets ?? []) {
      const value = await secretToWrite(
        trx,
        'application_secrets',
        secret.id,
        secret.value,
        notes,
        `application ${secret.applicationId}: secret ${secret.name} created with a new value (the file had none); read it in the console`,
      );
      await upsert(
        trx,
        'application_secrets',
        {
          id: secret.id,
          application_id: secret.applicationId,
          name: secret.name,
          ...(value !== undefined && {
            value: sealSecret(trx, sealedColumns.namedApplicationSecrets, secret.id, value),
          }),
          created_at: secret.createdAt,
          expires_at: secret.expiresAt,
        },
        counts,
      );
    }

    for (const scope of file.organizationScopes) {
      await upsert(
        trx,
        'organization_scopes',
        { id: scope.id, name: scope.name, description: scope.description, created_at: scope.createdAt },
        counts,
      );
    }
    for (const role of file.organizationRoles) {
      await upsert(
        trx,
        'organization_roles',
        { id: role.id, name: role.name, description: role.description, type: role.type, created_at: role.createdAt },
        counts,
      );
      const parent = { organization_role_id: role.id };
      await replaceLinks(
        trx,
        'organization_role_scopes',
        parent,
        [...new Set(role.organizationScopeIds)].map((id) => ({ organization_scope_id: id })),
      );
      await replaceLinks(
        trx,
        'organization_role_resource_scopes',
        parent,
        [...new Set(role.resourceScopeIds)].map((id) => ({ scope_id: id })),
      );
    }

    for (const connector of file.ssoConnectors) {
      const { config, secretless } = await connectorConfig(trx, 'sso_connectors', connector.id, connector.config);
      if (secretless) {
        notes.push(
          `SSO connector ${connector.id} (${connector.connectorName}): no client secret (the file had none); set it in the console`,
        );
      }
      await upsert(
        trx,
        'sso_connectors',
        {
          id: connector.id,
          provider_name: connector.providerName,
          connector_name: connector.connectorName,
          config,
          domains: JSON.stringify(connector.domains),
          branding: JSON.stringify(connector.branding),
          sync_profile: connector.syncProfile,
          created_at: connector.createdAt,
        },
        counts,
      );
    }
    for (const connector of file.connectors) {
      const { config, secretless } = await connectorConfig(trx, 'social_connectors', connector.id, connector.config);
      if (secretless) {
        notes.push(
          `connector ${connector.id} (${connector.target}): no client secret (the file had none); set it in the console`,
        );
      }
      await upsert(
        trx,
        'social_connectors',
        {
          id: connector.id,
          connector_id: connector.connectorId,
          target: connector.target,
          config,
          metadata: JSON.stringify(connector.metadata),
          sync_profile: connector.syncProfile,
          created_at: connector.createdAt,
        },
        counts,
      );
    }

    for (const organization of file.organizations) {
      const parent = { organization_id: organization.id };
      await upsert(
        trx,
        'organizations',
        {
          id: organization.id,
          name: organization.name,
          description: organization.description,
          custom_data: JSON.stringify(organization.customData),
          is_mfa_required: organization.isMfaRequired,
          color: JSON.stringify(organization.color ?? {}),
          branding: JSON.stringify(organization.branding ?? {}),
          custom_css: organization.customCss ?? null,
          created_at: organization.createdAt,
        },
        counts,
      );
      // Member applications' organization roles go with their membership (the foreign key cascades).
      await replaceLinks(
        trx,
        'organization_applications',
        parent,
        organization.applications.map((member) => ({ application_id: member.id })),
      );
      await replaceLinks(
        trx,
        'organization_application_roles',
        parent,
        organization.applications.flatMap((member) =>
          [...new Set(member.organizationRoleIds)].map((roleId) => ({
            application_id: member.id,
            organization_role_id: roleId,
          })),
        ),
      );
      await replaceLinks(
        trx,
        'organization_jit_email_domains',
        parent,
        [...new Set(organization.jit.emailDomains.map((domain) => domain.toLowerCase()))].map((domain) => ({
          email_domain: domain,
        })),
      );
      await replaceLinks(
        trx,
        'organization_jit_roles',
        parent,
        [...new Set(organization.jit.organizationRoleIds)].map((id) => ({ organization_role_id: id })),
      );
      await replaceLinks(
        trx,
        'organization_jit_sso_connectors',
        parent,
        [...new Set(organization.jit.ssoConnectorIds)].map((id) => ({ sso_connector_id: id })),
      );
    }

    for (const hook of file.hooks) {
      const signingKey = await secretToWrite(
        trx,
        'hooks',
        hook.id,
        hook.signingKey,
        notes,
        `hook ${hook.id} (${hook.name}): created with a new signing key (the file had none); receivers must be given it`,
      );
      const ed25519 = hook.signatureScheme === 'ed25519';
      const privateKey = ed25519
        ? await secretToWrite(
            trx,
            'hooks',
            hook.id,
            hook.signingPrivateKey,
            notes,
            `hook ${hook.id} (${hook.name}): created with a new Ed25519 key pair (the file had none); receivers must fetch its public key`,
            newEd25519Key,
          )
        : undefined;
      await upsert(
        trx,
        'hooks',
        {
          id: hook.id,
          name: hook.name,
          events: JSON.stringify(hook.events),
          config: JSON.stringify(hook.config),
          ...(signingKey === undefined
            ? {}
            : { signing_key: sealSecret(trx, sealedColumns.hookSigningKeys, hook.id, signingKey) }),
          ...(privateKey !== undefined && {
            signing_private_key: sealSecret(trx, sealedColumns.hookPrivateKeys, hook.id, privateKey),
          }),
          ...(!ed25519 && { signing_private_key: null }),
          previous_signing_key: null,
          previous_key_until: null,
          enabled: hook.enabled,
          disabled_reason: hook.disabledReason ?? null,
          signature_scheme: hook.signatureScheme ?? 'hmac-sha256',
          payload: hook.payload ?? 'full',
          exclude_application_ids: JSON.stringify(hook.excludeApplicationIds ?? []),
          ordering: hook.ordering ?? 'none',
          rate_limit_per_second: hook.rateLimitPerSecond ?? null,
          notify_email: hook.notifyEmail ?? null,
          created_at: hook.createdAt,
        },
        counts,
      );
    }

    for (const policy of file.trustedIssuers ?? []) {
      await upsert(
        trx,
        'trusted_issuers',
        {
          id: policy.id,
          name: policy.name,
          issuer: policy.issuer,
          jwks_uri: policy.jwksUri,
          audience: policy.audience,
          algorithms: JSON.stringify(policy.algorithms),
          user_mapping: JSON.stringify(policy.userMapping),
          application_ids: JSON.stringify(policy.applicationIds),
          created_at: policy.createdAt,
        },
        counts,
      );
    }
    for (const phrase of file.customPhrases ?? []) {
      await upsert(
        trx,
        'custom_phrases',
        { id: phrase.id, language_tag: phrase.languageTag, translation: JSON.stringify(phrase.translation) },
        counts,
      );
    }
    for (const template of file.emailTemplates ?? []) {
      await upsert(
        trx,
        'email_templates',
        {
          id: template.id,
          language_tag: template.languageTag,
          template_type: template.templateType,
          details: JSON.stringify(template.details),
          created_at: template.createdAt,
        },
        counts,
      );
    }

    await saveSignInExperience(trx, { ...defaultSignInExperience, ...file.signInExperience });
    for (const cache of caches) {
      await bumpCacheVersion(trx, cache);
    }
    return { ...counts, notes };
  });
}
