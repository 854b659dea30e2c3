import type { Knex } from 'knex';

/**
 * A lower-cased copy of each username, indexed: with the username policy's `caseSensitive: false`,
 * a username is found and kept unique whatever its case (`Bob` is `bob`). Not a unique index: under
 * the default policy `Bob` and `bob` are two people.
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.alterTable('users', (table) => {
    table.string('username_key', 128).nullable().index();
  });
  await db('users')
    .whereNotNull('username')
    .update({ username_key: db.raw('lower(username)') });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.alterTable('users', (table) => {
    table.dropIndex(['username_key']);
    table.dropColumn('username_key');
  });
}
