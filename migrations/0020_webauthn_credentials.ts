import type { Knex } from 'knex';

/**
 * Passkeys (WebAuthn) as second factors: a user may hold several, one row each in
 * `user_mfa_verifications`. `credential_id` is the WebAuthn credential's id (base64url) and ''
 * for the other types, so the unique index still allows one TOTP and one set of backup codes per
 * user while a user holds several passkeys; it also finds a passkey by its id (passwordless
 * sign-in answers with the id alone). The public key (COSE, base64url), the signature counter, the
 * transports (JSON) and a name the user sees. An Account API passkey registration keeps its
 * challenge, and once verified the passkey, in `account_verifications.webauthn` (JSON) until bound.
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.alterTable('account_verifications', (table) => table.text('webauthn').nullable());
  await db.schema.alterTable('user_mfa_verifications', (table) => {
    table.string('credential_id', 255).notNullable().defaultTo('');
    table.text('public_key').nullable();
    table.bigInteger('counter').nullable();
    table.text('transports').nullable();
    table.string('name', 128).nullable();
  });
  // The new index first: on MySQL the foreign key on user_id needs an index that starts with it.
  await db.schema.alterTable('user_mfa_verifications', (table) => {
    table.unique(['user_id', 'type', 'credential_id'], { indexName: 'user_mfa_verifications_credential_unique' });
    table.index(['credential_id'], 'user_mfa_verifications_credential_id_index');
  });
  await db.schema.alterTable('user_mfa_verifications', (table) => table.dropUnique(['user_id', 'type']));
}

export async function down(db: Knex): Promise<void> {
  await db('user_mfa_verifications').where({ type: 'WebAuthn' }).delete();
  await db.schema.alterTable('user_mfa_verifications', (table) => table.unique(['user_id', 'type']));
  await db.schema.alterTable('user_mfa_verifications', (table) => {
    table.dropUnique([], 'user_mfa_verifications_credential_unique');
    table.dropIndex([], 'user_mfa_verifications_credential_id_index');
  });
  await db.schema.alterTable('user_mfa_verifications', (table) => {
    table.dropColumn('credential_id');
    table.dropColumn('public_key');
    table.dropColumn('counter');
    table.dropColumn('transports');
    table.dropColumn('name');
  });
  await db.schema.alterTable('account_verifications', (table) => table.dropColumn('webauthn'));
}
