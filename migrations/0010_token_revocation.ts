import type { Knex } from 'knex';

import { byteForByte } from './collation.ts';

/**
 * Revoked JWT access tokens (a denylist by `jti`, kept until the token would have expired), and
 * API resources that token exchange may not target (the management API never may).
 */
export async function up(db: Knex): Promise<void> {
  const binary = byteForByte(db);

  await db.schema.createTable('revoked_tokens', (table) => {
    binary(table);
    table.string('jti', 191).primary();
    // The client the token was issued to: only it may revoke the token.
    table.string('client_id', 64).notNullable();
    // The token's own expiry (ms): past it the token is refused anyway and the row is pruned.
    table.bigInteger('expires_at').notNullable().index();
    table.bigInteger('revoked_at').notNullable();
  });
  // Each instance holds the unexpired jtis in memory, reloaded when a revocation bumps this.
  await db('cache_versions').insert({ name: 'revokedTokens', version: 0 });

  await db.schema.alterTable('resources', (table) => {
    table.boolean('is_exchange_target').notNullable().defaultTo(true);
  });
  await db('resources').where({ id: 'management-api' }).update({ is_exchange_target: false });
  await db('cache_versions').where({ name: 'resources' }).increment('version', 1);
}

export async function down(db: Knex): Promise<void> {
  await db.schema.alterTable('resources', (table) => {
    table.dropColumn('is_exchange_target');
  });
  await db('cache_versions').where({ name: 'revokedTokens' }).delete();
  await db.schema.dropTableIfExists('revoked_tokens');
}
