import type { Knex } from 'knex';

import { byteForByte } from './collation.ts';

/**
 * Logto's user consent scopes of a third-party application: what its consent page may ask a person
 * for. Resource scopes (for an API, or for an API within an organization) and organization scopes
 * are rows that go with the scope they name; the user scopes (`profile`, `email`…) are names.
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.createTable('consent_resource_scopes', (table) => {
    byteForByte(db)(table);
    table.string('application_id', 64).notNullable().references('applications.id').onDelete('CASCADE');
    table.string('scope_id', 21).notNullable().references('scopes.id').onDelete('CASCADE').index();
    /** Asked for a token of an organization (Logto's `organizationResourceScopes`), or for the API alone. */
    table.boolean('in_organization').notNullable();
    table.primary(['application_id', 'in_organization', 'scope_id']);
  });
  await db.schema.createTable('consent_organization_scopes', (table) => {
    byteForByte(db)(table);
    table.string('application_id', 64).notNullable().references('applications.id').onDelete('CASCADE');
    table
      .string('organization_scope_id', 21)
      .notNullable()
      .references('organization_scopes.id')
      .onDelete('CASCADE')
      .index();
    table.primary(['application_id', 'organization_scope_id']);
  });
  await db.schema.createTable('consent_user_scopes', (table) => {
    byteForByte(db)(table);
    table.string('application_id', 64).notNullable().references('applications.id').onDelete('CASCADE');
    table.string('scope', 64).notNullable();
    table.primary(['application_id', 'scope']);
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.dropTable('consent_user_scopes');
  await db.schema.dropTable('consent_organization_scopes');
  await db.schema.dropTable('consent_resource_scopes');
}
