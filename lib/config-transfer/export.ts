import { readSignInExperience } from '../sign-in-experience/sign-in-experience.ts';
import type { Queryable } from '../storage/database.ts';
import { openConfigSecret, openSecret, sealedColumns } from '../storage/sealed-columns.ts';
import { builtIn, connectorSecretField, formatVersion, type ConfigFile } from './file.ts';
import type { ConfigTable, Row } from './tables.ts';

export type ExportOptions = {
  /** Client secrets (the legacy and the named ones), hook signing keys and connector secrets, opened (they are left out otherwise). */
  withSecrets: boolean;
  /** The application BOOTSTRAP_ADMIN_CLIENT_ID keeps: the environment makes it, not the file. */
  bootstrapAdminId?: string;
};

/** An entry of one of the file's lists. */
type Entry<K extends keyof ConfigFile> = NonNullable<ConfigFile[K]> extends Array<infer E> ? E : never;
// A string column holding one of a field's values is asserted to the field's type below: the database
// holds what the API let in.

const json = (value: unknown): Record<string, unknown> => JSON.parse(String(value)) as Record<string, unknown>;
const number = (value: unknown) => Number(value);
const boolean = (value: unknown) => Boolean(value);
const text = (value: unknown) => {
  if (value !== null && typeof value !== 'string') {
    throw new Error(`expected a nullable text column, found a ${typeof value}`);
  }
  return value;
};

/**
 * Rows in the order they were made (ties by id), so that a new entry lands at the end of its list;
 * a table without a creation time goes by the column given.
 */
async function rowsOf(db: Queryable, table: ConfigTable, order = 'created_at'): Promise<Row[]> {
  return db(table).orderBy(order).orderBy('id').select<Row[]>('*');
}

/** A link table as lists of ids by the parent's id, sorted so that the file does not depend on the database's order. */
async function linksOf(
  db: Queryable,
  table: ConfigTable,
  parent: string,
  child: string,
): Promise<Map<string, string[]>> {
  const rows = await db(table).select<Row[]>(parent, child);
  const byParent = new Map<string, string[]>();
  for (const row of rows) {
    byParent.set(String(row[parent]), [...(byParent.get(String(row[parent])) ?? []), String(row[child])]);
  }
  for (const list of byParent.values()) {
    list.sort();
  }
  return byParent;
}

/**
 * The configuration held in the database, as the file stores it: lists in creation order, JSON
 * settings as stored, without timestamps that move (only `createdAt`), so that exporting twice, or
 * after an import into an empty database, gives the same bytes.
 */
export async function exportConfiguration(db: Queryable, options: ExportOptions): Promise<ConfigFile> {
  const skip = (ids: Set<string>) => (row: Row) => !ids.has(String(row.id));

  const scopesByResource = new Map<string, Entry<'resources'>['scopes']>();
  for (const row of (await rowsOf(db, 'scopes')).filter(skip(builtIn.scopeIds))) {
    const list = scopesByResource.get(String(row.resource_id)) ?? [];
    list.push({
      id: String(row.id),
      name: String(row.name),
      description: text(row.description),
      createdAt: number(row.created_at),
    });
    scopesByResource.set(String(row.resource_id), list);
  }
  const resources: Array<Entry<'resources'>> = (await rowsOf(db, 'resources'))
    .filter(skip(builtIn.resourceIds))
    .map((row) => ({
      id: String(row.id),
      name: String(row.name),
      indicator: String(row.indicator),
      isDefault: boolean(row.is_default),
      accessTokenTtl: number(row.access_token_ttl),
      isExchangeTarget: boolean(row.is_exchange_target),
      createdAt: number(row.created_at),
      scopes: scopesByResource.get(String(row.id)) ?? [],
    }));

  const roleScopes = await linksOf(db, 'roles_scopes', 'role_id', 'scope_id');
  const roles: Array<Entry<'roles'>> = (await rowsOf(db, 'roles')).filter(skip(builtIn.roleIds)).map((row) => ({
    id: String(row.id),
    name: String(row.name),
    description: String(row.description),
    type: String(row.type) as Entry<'roles'>['type'],
    isDefault: boolean(row.is_default),
    createdAt: number(row.created_at),
    scopeIds: roleScopes.get(String(row.id)) ?? [],
  }));

  const applicationRoles = await linksOf(db, 'applications_roles', 'application_id', 'role_id');
  const notExported = new Set([
    ...builtIn.applicationIds,
    ...(options.bootstrapAdminId ? [options.bootstrapAdminId] : []),
  ]);
  const applications: Array<Entry<'applications'>> = (await rowsOf(db, 'applications'))
    .filter(skip(notExported))
    .map((row) => ({
      id: String(row.id),
      name: String(row.name),
      description: text(row.description),
      type: String(row.type) as Entry<'applications'>['type'],
      ...(options.withSecrets
        ? { secret: openSecret(db, sealedColumns.applicationSecrets, String(row.id), String(row.secret)) }
        : {}),
      oidcClientMetadata: json(row.oidc_client_metadata) as Entry<'applications'>['oidcClientMetadata'],
      customClientMetadata: json(row.custom_client_metadata),
      customData: json(row.custom_data),
      isThirdParty: boolean(row.is_third_party),
      createdAt: number(row.created_at),
      roleIds: applicationRoles.get(String(row.id)) ?? [],
    }));

  const applicationSecrets: Array<Entry<'applicationSecrets'>> = (await rowsOf(db, 'application_secrets'))
    .filter((row) => !notExported.has(String(row.application_id)))
    .map((row) => ({
      id: String(row.id),
      applicationId: String(row.application_id),
      name: String(row.name),
      ...(options.withSecrets && {
        value: openSecret(db, sealedColumns.namedApplicationSecrets, String(row.id), String(row.value)),
      }),
      createdAt: number(row.created_at),
      expiresAt: row.expires_at === null ? null : number(row.expires_at),
    }));

  const organizationScopes: Array<Entry<'organizationScopes'>> = (await rowsOf(db, 'organization_scopes')).map(
    (row) => ({
      id: String(row.id),
      name: String(row.name),
      description: text(row.description),
      createdAt: number(row.created_at),
    }),
  );

  const organizationRoleScopes = await linksOf(
    db,
    'organization_role_scopes',
    'organization_role_id',
    'organization_scope_id',
  );
  const organizationRoleResourceScopes = await linksOf(
    db,
    'organization_role_resource_scopes',
    'organization_role_id',
    'scope_id',
  );
  const organizationRoles: Array<Entry<'organizationRoles'>> = (await rowsOf(db, 'organization_roles')).map((row) => ({
    id: String(row.id),
    name: String(row.name),
    description: text(row.description),
    type: String(row.type) as Entry<'organizationRoles'>['type'],
    createdAt: number(row.created_at),
    organizationScopeIds: organizationRoleScopes.get(String(row.id)) ?? [],
    resourceScopeIds: organizationRoleResourceScopes.get(String(row.id)) ?? [],
  }));

  /** A connector's configuration with its client secret only when secrets are asked for. */
  const asAsked = (config: Record<string, unknown>) =>
    options.withSecrets
      ? config
      : Object.fromEntries(Object.entries(config).filter(([key]) => key !== connectorSecretField));
  const ssoConnectors: Array<Entry<'ssoConnectors'>> = (await rowsOf(db, 'sso_connectors')).map((row) => ({
    id: String(row.id),
    providerName: String(row.provider_name) as Entry<'ssoConnectors'>['providerName'],
    connectorName: String(row.connector_name),
    config: asAsked(openConfigSecret(db, sealedColumns.ssoConnectorSecrets, String(row.id), json(row.config))),
    domains: JSON.parse(String(row.domains)) as string[],
    branding: json(row.branding),
    syncProfile: boolean(row.sync_profile),
    createdAt: number(row.created_at),
  }));
  const connectors: Array<Entry<'connectors'>> = (await rowsOf(db, 'social_connectors')).map((row) => ({
    id: String(row.id),
    connectorId: String(row.connector_id) as Entry<'connectors'>['connectorId'],
    target: String(row.target),
    config: asAsked(openConfigSecret(db, sealedColumns.socialConnectorSecrets, String(row.id), json(row.config))),
    metadata: json(row.metadata),
    syncProfile: boolean(row.sync_profile),
    createdAt: number(row.created_at),
  }));

  const memberApplications = await db('organization_applications')
    .orderBy('application_id')
    .select<Row[]>('organization_id', 'application_id');
  const memberApplicationRoles = await db('organization_application_roles')
    .orderBy('organization_role_id')
    .select<Row[]>('organization_id', 'application_id', 'organization_role_id');
  const jitDomains = await db('organization_jit_email_domains')
    .orderBy('email_domain')
    .select<Row[]>('organization_id', 'email_domain');
  const jitRoles = await linksOf(db, 'organization_jit_roles', 'organization_id', 'organization_role_id');
  const jitSsoConnectors = await linksOf(db, 'organization_jit_sso_connectors', 'organization_id', 'sso_connector_id');
  const organizations: Array<Entry<'organizations'>> = (await rowsOf(db, 'organizations')).map((row) => {
    const organizationId = String(row.id);
    return {
      id: organizationId,
      name: String(row.name),
      description: text(row.description),
      customData: json(row.custom_data),
      isMfaRequired: boolean(row.is_mfa_required),
      // Null in rows from before the columns: none.
      color: row.color === null ? {} : json(row.color),
      branding: row.branding === null ? {} : json(row.branding),
      customCss: text(row.custom_css),
      createdAt: number(row.created_at),
      applications: memberApplications
        .filter((member) => member.organization_id === organizationId)
        .map((member) => ({
          id: String(member.application_id),
          organizationRoleIds: memberApplicationRoles
            .filter((held) => held.organization_id === organizationId && held.application_id === member.application_id)
            .map((held) => String(held.organization_role_id)),
        })),
      jit: {
        emailDomains: jitDomains
          .filter((domain) => domain.organization_id === organizationId)
          .map((domain) => String(domain.email_domain)),
        organizationRoleIds: jitRoles.get(organizationId) ?? [],
        ssoConnectorIds: jitSsoConnectors.get(organizationId) ?? [],
      },
    };
  });

  const hooks: Array<Entry<'hooks'>> = (await rowsOf(db, 'hooks')).map((row) => ({
    id: String(row.id),
    name: String(row.name),
    events: JSON.parse(String(row.events)) as Entry<'hooks'>['events'],
    config: json(row.config) as Entry<'hooks'>['config'],
    enabled: boolean(row.enabled),
    disabledReason: text(row.disabled_reason),
    signatureScheme: text(row.signature_scheme) as Entry<'hooks'>['signatureScheme'],
    payload: text(row.payload) as Entry<'hooks'>['payload'],
    excludeApplicationIds: JSON.parse(text(row.exclude_application_ids) ?? '[]') as string[],
    ordering: text(row.ordering) as Entry<'hooks'>['ordering'],
    rateLimitPerSecond: row.rate_limit_per_second === null ? null : number(row.rate_limit_per_second),
    notifyEmail: text(row.notify_email),
    ...(options.withSecrets && {
      signingKey: openSecret(db, sealedColumns.hookSigningKeys, String(row.id), String(row.signing_key)),
      ...(typeof row.signing_private_key === 'string' && {
        signingPrivateKey: openSecret(db, sealedColumns.hookPrivateKeys, String(row.id), row.signing_private_key),
      }),
    }),
    createdAt: number(row.created_at),
  }));

  const trustedIssuers: Array<Entry<'trustedIssuers'>> = (await rowsOf(db, 'trusted_issuers')).map((row) => ({
    id: String(row.id),
    name: String(row.name),
    issuer: String(row.issuer),
    jwksUri: String(row.jwks_uri),
    audience: String(row.audience),
    algorithms: JSON.parse(String(row.algorithms)) as Entry<'trustedIssuers'>['algorithms'],
    userMapping: json(row.user_mapping) as Entry<'trustedIssuers'>['userMapping'],
    applicationIds: (JSON.parse(String(row.application_ids)) as string[]).sort(),
    createdAt: number(row.created_at),
  }));
  const customPhrases: Array<Entry<'customPhrases'>> = (await rowsOf(db, 'custom_phrases', 'language_tag')).map(
    (row) => ({ id: String(row.id), languageTag: String(row.language_tag), translation: json(row.translation) }),
  );
  const emailTemplates: Array<Entry<'emailTemplates'>> = (await rowsOf(db, 'email_templates')).map((row) => ({
    id: String(row.id),
    languageTag: String(row.language_tag),
    templateType: String(row.template_type) as Entry<'emailTemplates'>['templateType'],
    details: json(row.details) as Entry<'emailTemplates'>['details'],
    createdAt: number(row.created_at),
  }));

  return {
    version: formatVersion,
    resources,
    roles,
    applications,
    applicationSecrets,
    organizationScopes,
    organizationRoles,
    ssoConnectors,
    connectors,
    organizations,
    hooks,
    trustedIssuers,
    customPhrases,
    emailTemplates,
    signInExperience: await readSignInExperience(db),
  };
}
