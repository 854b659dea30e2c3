import { createHash } from 'node:crypto';
import type { Knex } from 'knex';

/*
 * Refresh tokens, opaque access tokens and authorization codes are stored under a SHA-256 digest of
 * their value and without `jti` (lib/oidc/adapter.ts). Rows written before keep working: their id is
 * replaced by its digest and `jti` dropped from the payload. A row still holding `jti` is one not
 * yet rewritten, so a start interrupted half-way picks up where it stopped.
 */
const bearerModels = ['AccessToken', 'RefreshToken', 'AuthorizationCode', 'ClientCredentials'];

export async function up(db: Knex): Promise<void> {
  for (;;) {
    const rows = await db('oidc_model_instances')
      .whereIn('model_name', bearerModels)
      .where('payload', 'like', '%"jti"%')
      .limit(500)
      .select<Array<{ model_name: string; id: string; payload: string }>>('model_name', 'id', 'payload');
    if (rows.length === 0) {
      return;
    }
    for (const row of rows) {
      const payload = JSON.parse(row.payload) as Record<string, unknown>;
      delete payload.jti;
      await db('oidc_model_instances')
        .where({ model_name: row.model_name, id: row.id })
        .update({ id: createHash('sha256').update(row.id).digest('base64url'), payload: JSON.stringify(payload) });
    }
  }
}

/** The values cannot be recovered from their digests: going back ends these tokens. */
export async function down(db: Knex): Promise<void> {
  await db('oidc_model_instances').whereIn('model_name', bearerModels).delete();
}
