import type { Knex } from 'knex';

import { byteForByte } from './collation.ts';

// Fixed ids of the rows seeded here (lib/shared/management-api.ts names them); the indicator is set from config at start.
const managementApi = {
  resourceId: 'management-api',
  scopeId: 'management-api-all',
  roleId: 'management-api-access',
};

export async function up(db: Knex): Promise<void> {
  const binary = byteForByte(db);
  // Everything oidc-provider persists (sessions, grants, interactions, codes, refresh and opaque tokens).
  await db.schema.createTable('oidc_model_instances', (table) => {
    binary(table);
    table.string('model_name', 64).notNullable();
    table.string('id', 191).notNullable();
    table.text('payload', 'mediumtext').notNullable();
    table.bigInteger('expires_at').nullable().index();
    table.bigInteger('consumed_at').nullable();
    table.string('grant_id', 191).nullable().index();
    table.string('uid', 191).nullable().index();
    table.string('user_code', 191).nullable().index();
    table.primary(['model_name', 'id']);
  });

  // Signing keys (private JWKs) and cookie keys; newest first is the one in use.
  await db.schema.createTable('oidc_keys', (table) => {
    binary(table);
    table.string('id', 64).primary();
    table.string('kind', 16).notNullable(); // 'private-keys' | 'cookie-keys'
    table.string('algorithm', 8).nullable(); // 'EC' | 'RSA' for signing keys
    table.text('value').notNullable();
    table.bigInteger('created_at').notNullable();
    table.bigInteger('rotated_at').nullable();
  });

  // One row per in-memory cache; writers bump it in their transaction (see lib/storage/shared-cache.ts).
  await db.schema.createTable('cache_versions', (table) => {
    binary(table);
    table.string('name', 64).primary();
    table.bigInteger('version').notNullable().defaultTo(0);
  });
  await db('cache_versions').insert(
    ['applications', 'resources', 'roles', 'keys'].map((name) => ({ name, version: 0 })),
  );

  await db.schema.createTable('applications', (table) => {
    binary(table);
    table.string('id', 64).primary();
    table.string('name', 256).notNullable();
    table.text('description').nullable();
    table.string('type', 32).notNullable();
    table.string('secret', 256).notNullable();
    table.text('oidc_client_metadata').notNullable();
    table.text('custom_client_metadata').notNullable();
    table.text('custom_data', 'mediumtext').notNullable();
    table.boolean('is_third_party').notNullable().defaultTo(false);
    table.bigInteger('created_at').notNullable().index();
  });

  await db.schema.createTable('resources', (table) => {
    binary(table);
    table.string('id', 21).primary();
    table.string('name', 256).notNullable();
    table.string('indicator', 255).notNullable().unique();
    table.boolean('is_default').notNullable().defaultTo(false);
    table.integer('access_token_ttl').notNullable().defaultTo(3600);
    table.bigInteger('created_at').notNullable().index();
  });

  await db.schema.createTable('scopes', (table) => {
    binary(table);
    table.string('id', 21).primary();
    table.string('resource_id', 21).notNullable().references('resources.id').onDelete('CASCADE');
    table.string('name', 256).notNullable();
    table.text('description').nullable();
    table.bigInteger('created_at').notNullable();
    table.unique(['resource_id', 'name']);
  });

  await db.schema.createTable('roles', (table) => {
    binary(table);
    table.string('id', 21).primary();
    table.string('name', 128).notNullable().unique();
    table.text('description').notNullable();
    table.string('type', 32).notNullable();
    table.boolean('is_default').notNullable().defaultTo(false);
    table.bigInteger('created_at').notNullable().index();
  });

  await db.schema.createTable('roles_scopes', (table) => {
    binary(table);
    table.string('role_id', 21).notNullable().references('roles.id').onDelete('CASCADE');
    table.string('scope_id', 21).notNullable().references('scopes.id').onDelete('CASCADE').index();
    table.primary(['role_id', 'scope_id']);
  });

  await db.schema.createTable('applications_roles', (table) => {
    binary(table);
    table.string('application_id', 64).notNullable().references('applications.id').onDelete('CASCADE');
    table.string('role_id', 21).notNullable().references('roles.id').onDelete('CASCADE').index();
    table.primary(['application_id', 'role_id']);
  });

  const now = Date.now();
  await db('resources').insert({
    id: managementApi.resourceId,
    name: 'Management API',
    indicator: 'urn:identity-service:management-api',
    is_default: false,
    access_token_ttl: 3600,
    created_at: now,
  });
  await db('scopes').insert({
    id: managementApi.scopeId,
    resource_id: managementApi.resourceId,
    name: 'all',
    description: 'Default scope for the management API, grants access to all endpoints.',
    created_at: now,
  });
  await db('roles').insert({
    id: managementApi.roleId,
    name: 'Management API access',
    description: 'Grants the management API scope `all` to machine-to-machine applications.',
    type: 'MachineToMachine',
    is_default: false,
    created_at: now,
  });
  await db('roles_scopes').insert({ role_id: managementApi.roleId, scope_id: managementApi.scopeId });
}

export async function down(db: Knex): Promise<void> {
  for (const table of [
    'applications_roles',
    'roles_scopes',
    'roles',
    'scopes',
    'resources',
    'applications',
    'cache_versions',
    'oidc_keys',
    'oidc_model_instances',
  ]) {
    await db.schema.dropTableIfExists(table);
  }
}
