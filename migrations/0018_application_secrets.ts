import type { Knex } from 'knex';

import { byteForByte } from './collation.ts';

/**
 * Application secrets as Logto's (`GET/POST /api/applications/:id/secrets`): several named secrets
 * per application, each with an optional expiry, any valid one authenticating the client. `id` names
 * the row for sealing (`application_secrets.value:<id>`), so that a rename keeps the value readable;
 * `value` is as wide as a sealed 32-character secret needs. `applications.secret` stays: it is the
 * legacy secret (Logto's), or once that is deleted, an internal one that is never shown.
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.createTable('application_secrets', (table) => {
    byteForByte(db)(table);
    table.string('id', 21).primary();
    table.string('application_id', 64).notNullable().references('applications.id').onDelete('CASCADE');
    table.string('name', 256).notNullable();
    table.string('value', 512).notNullable();
    table.bigInteger('created_at').notNullable();
    table.bigInteger('expires_at').nullable();
    table.unique(['application_id', 'name']);
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.dropTableIfExists('application_secrets');
}
