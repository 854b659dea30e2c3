import type { Knex } from 'knex';

/**
 * When each user's password was last set, for Logto's password expiration policy. Null for a
 * password set before this column: it ages from the moment the policy was turned on.
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.alterTable('users', (table) => {
    table.bigInteger('password_updated_at').nullable();
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.alterTable('users', (table) => {
    table.dropColumn('password_updated_at');
  });
}
