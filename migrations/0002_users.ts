import type { Knex } from 'knex';

import { byteForByte } from './collation.ts';

export async function up(db: Knex): Promise<void> {
  const binary = byteForByte(db);
  await db.schema.createTable('users', (table) => {
    binary(table);
    table.string('id', 21).primary();
    table.string('username', 128).nullable().unique();
    table.string('primary_email', 128).nullable();
    // Emails are unique whatever their case: the lower-cased copy carries the constraint.
    table.string('email_key', 128).nullable().unique();
    table.string('primary_phone', 32).nullable().unique();
    table.string('password_digest', 256).nullable();
    table.string('password_algorithm', 16).nullable();
    table.string('name', 128).nullable();
    table.string('avatar', 2048).nullable();
    table.text('custom_data', 'mediumtext').notNullable();
    table.text('profile').notNullable();
    table.text('identities').notNullable();
    table.string('application_id', 64).nullable();
    table.bigInteger('last_sign_in_at').nullable();
    table.boolean('is_suspended').notNullable().defaultTo(false);
    table.bigInteger('created_at').notNullable().index();
    table.bigInteger('updated_at').notNullable();
  });

  await db.schema.createTable('users_roles', (table) => {
    binary(table);
    table.string('user_id', 21).notNullable().references('users.id').onDelete('CASCADE');
    table.string('role_id', 21).notNullable().references('roles.id').onDelete('CASCADE').index();
    table.primary(['user_id', 'role_id']);
  });

  // Whose sessions, grants and tokens these are: suspending or deleting a user revokes them all.
  await db.schema.alterTable('oidc_model_instances', (table) => {
    table.string('account_id', 64).nullable().index();
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.alterTable('oidc_model_instances', (table) => {
    table.dropColumn('account_id');
  });
  await db.schema.dropTableIfExists('users_roles');
  await db.schema.dropTableIfExists('users');
}
