import type { Knex } from 'knex';

import { byteForByte } from './collation.ts';

/**
 * Second factors (TOTP, backup codes), social connectors, enterprise SSO connectors, the identities
 * users hold at them, and organizations that admit an SSO connector's users just in time.
 */
export async function up(db: Knex): Promise<void> {
  const binary = byteForByte(db);

  await db.schema.createTable('user_mfa_verifications', (table) => {
    binary(table);
    table.string('id', 21).primary();
    table.string('user_id', 21).notNullable().references('users.id').onDelete('CASCADE');
    table.string('type', 16).notNullable();
    // TOTP: the base32 shared secret.
    table.string('secret', 128).nullable();
    // Backup codes: JSON [{digest, usedAt}]; the codes themselves are shown once.
    table.text('codes').nullable();
    // TOTP: the last time step accepted, so a code is never accepted twice.
    table.bigInteger('last_used_step').nullable();
    table.bigInteger('last_used_at').nullable();
    table.bigInteger('created_at').notNullable();
    // One factor of each type per user: concurrent bindings cannot both land.
    table.unique(['user_id', 'type']);
  });

  await db.schema.alterTable('users', (table) => {
    // The user declined the optional MFA prompt (policy UserControlled); not asked again.
    table.boolean('mfa_skipped').notNullable().defaultTo(false);
  });

  await db.schema.createTable('social_connectors', (table) => {
    binary(table);
    table.string('id', 21).primary();
    // The factory: 'oidc' or 'oauth2'.
    table.string('connector_id', 32).notNullable();
    // The key of the user's identity in `users.identities`.
    table.string('target', 64).notNullable().unique();
    table.text('config').notNullable();
    table.text('metadata').notNullable();
    table.boolean('sync_profile').notNullable().defaultTo(false);
    table.bigInteger('created_at').notNullable().index();
  });

  // Which user holds which identity at a social connector's target, race-free: the details live in
  // `users.identities` (as the API shows them); this table is their unique index.
  await db.schema.createTable('user_social_identities', (table) => {
    binary(table);
    table.string('user_id', 21).notNullable().references('users.id').onDelete('CASCADE');
    table.string('target', 64).notNullable();
    table.string('identity_id', 255).notNullable();
    table.primary(['user_id', 'target']);
    table.unique(['target', 'identity_id']);
  });

  await db.schema.createTable('sso_connectors', (table) => {
    binary(table);
    table.string('id', 21).primary();
    table.string('provider_name', 32).notNullable();
    table.string('connector_name', 128).notNullable().unique();
    table.text('config').notNullable();
    // JSON array of lower-cased email domains.
    table.text('domains').notNullable();
    table.text('branding').notNullable();
    table.boolean('sync_profile').notNullable().defaultTo(false);
    table.bigInteger('created_at').notNullable().index();
  });

  await db.schema.createTable('user_sso_identities', (table) => {
    binary(table);
    table.string('id', 21).primary();
    table.string('user_id', 21).notNullable().references('users.id').onDelete('CASCADE');
    table.string('sso_connector_id', 21).notNullable().references('sso_connectors.id').onDelete('CASCADE');
    table.string('issuer', 255).notNullable();
    table.string('identity_id', 255).notNullable();
    table.text('detail').notNullable();
    table.bigInteger('created_at').notNullable();
    table.bigInteger('updated_at').notNullable();
    table.unique(['issuer', 'identity_id']);
    table.unique(['user_id', 'sso_connector_id']);
  });

  await db.schema.createTable('organization_jit_sso_connectors', (table) => {
    binary(table);
    table.string('organization_id', 21).notNullable().references('organizations.id').onDelete('CASCADE');
    table.string('sso_connector_id', 21).notNullable().references('sso_connectors.id').onDelete('CASCADE').index();
    table.primary(['organization_id', 'sso_connector_id']);
  });

  await db('cache_versions').insert({ name: 'connectors', version: 0 });
}

export async function down(db: Knex): Promise<void> {
  await db('cache_versions').where({ name: 'connectors' }).delete();
  await db.schema.dropTableIfExists('organization_jit_sso_connectors');
  await db.schema.dropTableIfExists('user_sso_identities');
  await db.schema.dropTableIfExists('sso_connectors');
  await db.schema.dropTableIfExists('user_social_identities');
  await db.schema.dropTableIfExists('social_connectors');
  await db.schema.alterTable('users', (table) => {
    table.dropColumn('mfa_skipped');
  });
  await db.schema.dropTableIfExists('user_mfa_verifications');
}
