import type { Knex } from 'knex';

/**
 * What Logto's organizations also hold: `color` and `branding` (JSON) and `customCss`. Nullable and
 * without defaults, so the columns are added the same way on SQLite, MariaDB and MySQL (where a text
 * column takes no literal default); a null JSON column reads as `{}`. `custom_css` holds up to 64 Ki
 * characters, which utf8mb4 may make 256 KiB: mediumtext on MySQL.
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.alterTable('organizations', (table) => {
    table.text('color').nullable();
    table.text('branding').nullable();
    table.text('custom_css', 'mediumtext').nullable();
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.alterTable('organizations', (table) => {
    table.dropColumn('custom_css');
    table.dropColumn('branding');
    table.dropColumn('color');
  });
}
