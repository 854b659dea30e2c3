import type { Knex } from 'knex';

/**
 * Webhook signing schemes, attribution and payload shape (docs/webhooks.md): the scheme a hook
 * signs with; its Ed25519 private key (a JWK, sealed like every secret, lib/storage/sealed-columns.ts);
 * the key it signed with before its last rotation (sealed JSON) and until when that one still signs;
 * full or thin payloads; the applications whose changes it does not receive (a JSON array).
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.alterTable('hooks', (table) => {
    table.string('signature_scheme', 16).notNullable().defaultTo('hmac-sha256');
    table.text('signing_private_key').nullable();
    table.text('previous_signing_key').nullable();
    table.bigInteger('previous_key_until').nullable();
    table.string('payload', 8).notNullable().defaultTo('full');
    table.text('exclude_application_ids').nullable();
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.alterTable('hooks', (table) => {
    table.dropColumn('signature_scheme');
    table.dropColumn('signing_private_key');
    table.dropColumn('previous_signing_key');
    table.dropColumn('previous_key_until');
    table.dropColumn('payload');
    table.dropColumn('exclude_application_ids');
  });
}
