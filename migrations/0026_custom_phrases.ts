import type { Knex } from 'knex';

import { byteForByte } from './collation.ts';

/**
 * Custom phrases (Logto's `/api/custom-phrases/:languageTag`): per language, the operator's texts in
 * place of the hosted pages' and built-in emails' own, as a JSON object shaped like the catalogue.
 * A catalogue is some 20 KiB; `translation` allows 256 Ki characters (mediumtext on MySQL).
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.createTable('custom_phrases', (table) => {
    byteForByte(db)(table);
    table.string('id', 21).primary();
    table.string('language_tag', 16).notNullable().unique();
    table.text('translation', 'mediumtext').notNullable();
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.dropTableIfExists('custom_phrases');
}
