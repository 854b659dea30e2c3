import type { Knex } from 'knex';

import { byteForByte } from './collation.ts';

/**
 * Email templates an operator writes (Logto's `/api/email-templates`): one per language tag and
 * template type, its `details` (subject, content, content type, reply-to, sender name) as JSON.
 * `details` holds a body of up to 256 Ki characters, which utf8mb4 may make 1 MiB: mediumtext on
 * MySQL. Where no row matches a message, the built-in email is sent, as before this table.
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.createTable('email_templates', (table) => {
    byteForByte(db)(table);
    table.string('id', 21).primary();
    table.string('language_tag', 64).notNullable();
    table.string('template_type', 64).notNullable();
    table.text('details', 'mediumtext').notNullable();
    table.bigInteger('created_at').notNullable();
    table.unique(['language_tag', 'template_type']);
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.dropTableIfExists('email_templates');
}
