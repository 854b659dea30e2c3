/**
 * The tables an export reads and an import writes, each with every column it has. A test compares
 * this with the migrated schema: a migration that adds a column here must say how it travels.
 */
export const configColumns = {
  resources: ['id', 'name', 'indicator', 'is_default', 'access_token_ttl', 'is_exchange_target', 'created_at'],
  scopes: ['id', 'resource_id', 'name', 'description', 'created_at'],
  roles: ['id', 'name', 'description', 'type', 'is_default', 'created_at'],
  roles_scopes: ['role_id', 'scope_id'],
  applications: [
    'id',
    'name',
    'description',
    'type',
    'secret',
    'oidc_client_metadata',
    'custom_client_metadata',
    'custom_data',
    'is_third_party',
    'created_at',
  ],
  applications_roles: ['application_id', 'role_id'],
  application_secrets: ['id', 'application_id', 'name', 'value', 'created_at', 'expires_at'],
  organization_scopes: ['id', 'name', 'description', 'created_at'],
  organization_roles: ['id', 'name', 'description', 'type', 'created_at'],
  organization_role_scopes: ['organization_role_id', 'organization_scope_id'],
  organization_role_resource_scopes: ['organization_role_id', 'scope_id'],
  sso_connectors: [
    'id',
    'provider_name',
    'connector_name',
    'config',
    'domains',
    'branding',
    'sync_profile',
    'created_at',
  ],
  social_connectors: ['id', 'connector_id', 'target', 'config', 'metadata', 'sync_profile', 'created_at'],
  organizations: [
    'id',
    'name',
    'description',
    'custom_data',
    'is_mfa_required',
    'color',
    'branding',
    'custom_css',
    'created_at',
  ],
  organization_applications: ['organization_id', 'application_id'],
  organization_application_roles: ['organization_id', 'application_id', 'organization_role_id'],
  organization_jit_email_domains: ['organization_id', 'email_domain'],
  organization_jit_roles: ['organization_id', 'organization_role_id'],
  organization_jit_sso_connectors: ['organization_id', 'sso_connector_id'],
  hooks: [
    'id',
    'name',
    'events',
    'config',
    'signing_key',
    'enabled',
    'disabled_reason',
    'signature_scheme',
    'signing_private_key',
    /** A rotation's overlap does not travel: an import ends it. */
    'previous_signing_key',
    'previous_key_until',
    'payload',
    'exclude_application_ids',
    'ordering',
    'rate_limit_per_second',
    'notify_email',
    'created_at',
  ],
  trusted_issuers: [
    'id',
    'name',
    'issuer',
    'jwks_uri',
    'audience',
    'algorithms',
    'user_mapping',
    'application_ids',
    'created_at',
  ],
  custom_phrases: ['id', 'language_tag', 'translation'],
  email_templates: ['id', 'language_tag', 'template_type', 'details', 'created_at'],
  sign_in_experience: ['id', 'settings'],
} as const;

export type ConfigTable = keyof typeof configColumns;

/** A row as the driver returns it: booleans as 0/1 on both databases, JSON as text. */
export type Row = Record<string, unknown>;

/** What must be unique in each table besides the id: named when an entry collides with another row. */
export const uniqueWhat: Partial<Record<ConfigTable, string>> = {
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
