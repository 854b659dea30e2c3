import type { Adapter, AdapterPayload } from 'oidc-provider';

import { consumeModel, deleteModel, deleteModelsOfGrant, findModel, upsertModel } from '../sessions/queries.ts';
import type { Queryable } from '../storage/database.ts';

/**
 * oidc-provider's storage for its own models (sessions, grants, interactions, codes, refresh and
 * opaque tokens) in one table. Clients are not stored here: `findClient` maps applications.
 */
export function createAdapter(db: Queryable, findClient: (id: string) => Promise<AdapterPayload | undefined>) {
  return class KnexAdapter implements Adapter {
    constructor(private readonly model: string) {}

    async upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
      await upsertModel(db, { model: this.model, id }, payload, expiresIn ? Date.now() + expiresIn * 1000 : null);
    }

    private async findBy(
      where: { id: string } | { uid: string } | { user_code: string },
    ): Promise<AdapterPayload | undefined> {
      const row = await findModel(db, this.model, where);
      if (!row || (row.expires_at !== null && row.expires_at <= Date.now())) {
        return undefined;
      }
      return row.consumed_at === null ? row.payload : { ...row.payload, consumed: Math.floor(row.consumed_at / 1000) };
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
      await consumeModel(db, { model: this.model, id });
    }

    async destroy(id: string): Promise<void> {
      await deleteModel(db, { model: this.model, id });
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      await deleteModelsOfGrant(db, grantId);
    }
  };
}
