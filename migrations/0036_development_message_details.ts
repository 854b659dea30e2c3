import type { Knex } from 'knex';

/**
 * The development message store also keeps what shaped an email: the language it was asked in and
 * the operator's email template it was written from, if one (`{locale, template}` as JSON), so a
 * developer sees which template a message used without an SMTP server.
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.alterTable('development_messages', (table) => {
    table.text('details').nullable();
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.alterTable('development_messages', (table) => {
    table.dropColumn('details');
  });
}
