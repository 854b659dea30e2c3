import type { Adapter, AdapterPayload } from 'oidc-provider';

import type { Queryable } from '../storage/database.ts';

type Row = { payload: string; expires_at: number | null; consumed_at: number | null };

/**
 * oidc-provider's storage for its own models (sessions, grants, interactions, codes, refresh and
 * opaque tokens) in one table. Clients are not stored here: `findClient` maps applications.
 */
export function createAdapter(db: Queryable, findClient: (id: string) => Promise<AdapterPayload | undefined>) {
  return class KnexAdapter implements Adapter {
    constructor(private readonly model: string) {}

    private rows() {
      return db('oidc_model_instances').where({ model_name: this.model });
    }

    async upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
      await db('oidc_model_instances')
        .insert({
          model_name: this.model,
          id,
          payload: JSON.stringify(payload),
          expires_at: expiresIn ? Date.now() + expiresIn * 1000 : null,
          grant_id: payload.grantId ?? null,
          uid: payload.uid ?? null,
          user_code: payload.userCode ?? null,
          account_id: payload.accountId ?? null,
        })
        .onConflict(['model_name', 'id'])
        .merge();
    }

    private async findBy(where: Record<string, string>): Promise<AdapterPayload | undefined> {
      const row = await this.rows().where(where).first<Row | undefined>('payload', 'expires_at', 'consumed_at');
      if (!row || (row.expires_at !== null && row.expires_at <= Date.now())) {
        return undefined;
      }
      const payload = JSON.parse(row.payload) as AdapterPayload;
      return row.consumed_at === null ? payload : { ...payload, consumed: Math.floor(row.consumed_at / 1000) };
    }

    async find(id: string): Promise<AdapterPayload | undefined> {
      return this.model === 'Client' ? findClient(id) : this.findBy({ id });
    }

    findByUid(uid: string) {
      return this.findBy({ uid });
    }

    findByUserCode(userCode: string) {
      return this.findBy({ user_code: userCode });
    }

    async consume(id: string): Promise<void> {
      await this.rows().where({ id }).update({ consumed_at: Date.now() });
    }

    async destroy(id: string): Promise<void> {
      await this.rows().where({ id }).delete();
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      await db('oidc_model_instances').where({ grant_id: grantId }).delete();
    }
  };
}

/** Deletes rows past their expiry; `find` already ignores them, this keeps the table small. */
export async function purgeExpiredModels(db: Queryable): Promise<number> {
  return db('oidc_model_instances').where('expires_at', '<=', Date.now()).delete();
}
