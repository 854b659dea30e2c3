import type { Knex } from 'knex';

import { byteForByte } from './collation.ts';

/**
 * Trusted outside issuers (federated subject tokens, RFC 8693 and RFC 7523): one row per issuer
 * whose JWTs our applications may exchange, with the audience, algorithms and key set we require,
 * how its subjects map to our users (JSON) and which applications may present its tokens (JSON).
 * An issuer is trusted under one policy only (unique). `trusted_issuer_subjects` remembers the
 * users made just in time, by the outside subject, so the next token of the same subject finds its user.
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.createTable('trusted_issuers', (table) => {
    byteForByte(db)(table);
    table.string('id', 21).primary();
    table.string('name', 128).notNullable();
    table.string('issuer', 255).notNullable().unique();
    table.string('jwks_uri', 2048).notNullable();
    table.string('audience', 255).notNullable();
    table.text('algorithms').notNullable();
    table.text('user_mapping').notNullable();
    table.text('application_ids').notNullable();
    table.bigInteger('created_at').notNullable();
  });
  await db.schema.createTable('trusted_issuer_subjects', (table) => {
    byteForByte(db)(table);
    table.string('trusted_issuer_id', 21).notNullable().references('trusted_issuers.id').onDelete('CASCADE');
    table.string('subject', 255).notNullable();
    table.string('user_id', 21).notNullable().references('users.id').onDelete('CASCADE');
    table.primary(['trusted_issuer_id', 'subject']);
    table.index(['user_id']);
  });
  await db('cache_versions').insert({ name: 'trustedIssuers', version: 0 });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.dropTableIfExists('trusted_issuer_subjects');
  await db.schema.dropTableIfExists('trusted_issuers');
  await db('cache_versions').where({ name: 'trustedIssuers' }).delete();
}
