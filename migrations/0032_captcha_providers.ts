import type { Knex } from 'knex';

import { byteForByte } from './collation.ts';

/**
 * Logto's captcha provider (`/api/captcha-provider`): at most one, Cloudflare Turnstile or Google
 * reCAPTCHA Enterprise, its configuration as JSON with the secret key sealed in it
 * (sealed-columns.ts). The sign-in experience's `captchaPolicy` says whether sign-in asks for it.
 * One row at most is the writers' rule (they hold the settings' lock), as Logto's one per tenant.
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.createTable('captcha_providers', (table) => {
    byteForByte(db)(table);
    table.string('id', 21).primary();
    table.text('config').notNullable();
    table.bigInteger('created_at').notNullable();
    table.bigInteger('updated_at').notNullable();
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.dropTable('captcha_providers');
}
