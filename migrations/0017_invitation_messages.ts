import type { Knex } from 'knex';

/**
 * The development message store keeps organization invitations too: their link, and the code the
 * caller may give (up to 256 characters, and none at all when only a link is sent).
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.alterTable('development_messages', (table) => {
    table.string('code', 256).nullable().alter();
    table.text('link').nullable();
  });
}

export async function down(db: Knex): Promise<void> {
  await db('development_messages').whereNull('code').delete();
  await db.schema.alterTable('development_messages', (table) => {
    table.dropColumn('link');
    table.string('code', 16).notNullable().alter();
  });
}
