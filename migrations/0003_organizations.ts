import type { Knex } from 'knex';

import { byteForByte } from './collation.ts';

/** Organizations as Logto models them: members (users, applications), organization roles and scopes. */
export async function up(db: Knex): Promise<void> {
  const binary = byteForByte(db);
  const organizationId = (table: Knex.CreateTableBuilder) =>
    table.string('organization_id', 21).notNullable().references('organizations.id').onDelete('CASCADE');
  const organizationRoleId = (table: Knex.CreateTableBuilder) =>
    table.string('organization_role_id', 21).notNullable().references('organization_roles.id').onDelete('CASCADE');
  const userId = (table: Knex.CreateTableBuilder) =>
    table.string('user_id', 21).notNullable().references('users.id').onDelete('CASCADE');
  const applicationId = (table: Knex.CreateTableBuilder) =>
    table.string('application_id', 64).notNullable().references('applications.id').onDelete('CASCADE');

  await db.schema.createTable('organizations', (table) => {
    binary(table);
    table.string('id', 21).primary();
    table.string('name', 128).notNullable();
    table.text('description').nullable();
    table.text('custom_data', 'mediumtext').notNullable();
    table.boolean('is_mfa_required').notNullable().defaultTo(false);
    table.bigInteger('created_at').notNullable().index();
  });

  await db.schema.createTable('organization_scopes', (table) => {
    binary(table);
    table.string('id', 21).primary();
    table.string('name', 128).notNullable().unique();
    table.text('description').nullable();
    table.bigInteger('created_at').notNullable();
  });

  await db.schema.createTable('organization_roles', (table) => {
    binary(table);
    table.string('id', 21).primary();
    table.string('name', 128).notNullable().unique();
    table.text('description').nullable();
    table.string('type', 32).notNullable().defaultTo('User');
    table.bigInteger('created_at').notNullable();
  });

  await db.schema.createTable('organization_role_scopes', (table) => {
    binary(table);
    organizationRoleId(table);
    table
      .string('organization_scope_id', 21)
      .notNullable()
      .references('organization_scopes.id')
      .onDelete('CASCADE')
      .index();
    table.primary(['organization_role_id', 'organization_scope_id']);
  });

  // API resource scopes an organization role grants (to its holders, within the organization).
  await db.schema.createTable('organization_role_resource_scopes', (table) => {
    binary(table);
    organizationRoleId(table);
    table.string('scope_id', 21).notNullable().references('scopes.id').onDelete('CASCADE').index();
    table.primary(['organization_role_id', 'scope_id']);
  });

  await db.schema.createTable('organization_users', (table) => {
    binary(table);
    organizationId(table);
    userId(table).index();
    table.primary(['organization_id', 'user_id']);
  });

  await db.schema.createTable('organization_user_roles', (table) => {
    binary(table);
    table.string('organization_id', 21).notNullable();
    table.string('user_id', 21).notNullable();
    organizationRoleId(table).index();
    table.primary(['organization_id', 'user_id', 'organization_role_id']);
    // A member's roles go with the membership.
    table
      .foreign(['organization_id', 'user_id'], 'organization_user_roles_membership')
      .references(['organization_id', 'user_id'])
      .inTable('organization_users')
      .onDelete('CASCADE');
  });

  await db.schema.createTable('organization_applications', (table) => {
    binary(table);
    organizationId(table);
    applicationId(table).index();
    table.primary(['organization_id', 'application_id']);
  });

  await db.schema.createTable('organization_application_roles', (table) => {
    binary(table);
    table.string('organization_id', 21).notNullable();
    table.string('application_id', 64).notNullable();
    organizationRoleId(table).index();
    table.primary(['organization_id', 'application_id', 'organization_role_id']);
    table
      .foreign(['organization_id', 'application_id'], 'organization_application_roles_membership')
      .references(['organization_id', 'application_id'])
      .inTable('organization_applications')
      .onDelete('CASCADE');
  });

  await db.schema.createTable('organization_jit_email_domains', (table) => {
    binary(table);
    organizationId(table);
    table.string('email_domain', 128).notNullable().index();
    table.primary(['organization_id', 'email_domain']);
  });

  await db.schema.createTable('organization_jit_roles', (table) => {
    binary(table);
    organizationId(table);
    organizationRoleId(table);
    table.primary(['organization_id', 'organization_role_id']);
  });

  await db.schema.createTable('organization_invitations', (table) => {
    binary(table);
    table.string('id', 21).primary();
    table.string('inviter_id', 21).nullable().references('users.id').onDelete('SET NULL');
    table.string('invitee', 256).notNullable();
    table.string('accepted_user_id', 21).nullable().references('users.id').onDelete('SET NULL');
    organizationId(table);
    table.string('status', 16).notNullable();
    table.bigInteger('created_at').notNullable().index();
    table.bigInteger('updated_at').notNullable();
    table.bigInteger('expires_at').notNullable();
  });

  await db.schema.createTable('organization_invitation_roles', (table) => {
    binary(table);
    table
      .string('organization_invitation_id', 21)
      .notNullable()
      .references('organization_invitations.id')
      .onDelete('CASCADE');
    organizationRoleId(table);
    table.primary(['organization_invitation_id', 'organization_role_id']);
  });
}

export async function down(db: Knex): Promise<void> {
  for (const table of [
    'organization_invitation_roles',
    'organization_invitations',
    'organization_jit_roles',
    'organization_jit_email_domains',
    'organization_application_roles',
    'organization_applications',
    'organization_user_roles',
    'organization_users',
    'organization_role_resource_scopes',
    'organization_role_scopes',
    'organization_roles',
    'organization_scopes',
    'organizations',
  ]) {
    await db.schema.dropTableIfExists(table);
  }
}
