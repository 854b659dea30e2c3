import { createHash } from 'node:crypto';
import type { Adapter, AdapterPayload } from 'oidc-provider';

import { consumeModel, deleteModel, deleteModelsOfGrant, findModel, upsertModel } from '../sessions/queries.ts';
import type { Queryable } from '../storage/database.ts';
import { withTransaction } from '../storage/transaction.ts';

/**
 * Models whose id is the credential itself (the token or code a client presents). They are stored
 * under a SHA-256 digest of it and without `jti` in the payload, so whoever reads the database (a
 * backup, a replica) finds no token to use; the provider always looks them up by the value it was
 * given, which the adapter digests again. (The ids have 256 bits of randomness: no salt is needed.)
 * Models found by another key (sessions and device codes by uid or user code, which must give back
 * their id) are not among them.
 */
const bearerModels = new Set(['AccessToken', 'RefreshToken', 'AuthorizationCode', 'ClientCredentials']);

export const tokenDigest = (value: string): string => createHash('sha256').update(value).digest('base64url');

/**
 * oidc-provider's storage for its own models (sessions, grants, interactions, codes, refresh and
 * opaque tokens) in one table. Clients are not stored here: `findClient` maps applications.
 */
export function createAdapter(db: Queryable, findClient: (id: string) => Promise<AdapterPayload | undefined>) {
  return class KnexAdapter implements Adapter {
    private readonly model: string;
    private readonly digested: boolean;

    constructor(model: string) {
      this.model = model;
      this.digested = bearerModels.has(model);
    }

    private key(id: string) {
      return { model: this.model, id: this.digested ? tokenDigest(id) : id };
    }

    async upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
      const stored = this.digested ? { ...payload, jti: undefined } : payload;
      await upsertModel(db, this.key(id), stored, expiresIn ? Date.now() + expiresIn * 1000 : null);
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
      if (this.model === 'Client') {
        return findClient(id);
      }
      const found = await this.findBy({ id: this.key(id).id });
      return found && this.digested ? { ...found, jti: id } : found;
    }

    findByUid(uid: string) {
      return this.findBy({ uid });
    }

    findByUserCode(userCode: string) {
      return this.findBy({ user_code: userCode });
    }

    async consume(id: string): Promise<void> {
      await consumeModel(db, this.key(id));
    }

    // The provider revokes a grant with these at once (a replayed refresh token: the token, then
    // every model's rows of its grant, each on a connection of its own): on MySQL such deletes of
    // one row set end as deadlocks, and the victim must be run again rather than answered 500.
    async destroy(id: string): Promise<void> {
      await withTransaction(db, (trx) => deleteModel(trx, this.key(id)));
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      await withTransaction(db, (trx) => deleteModelsOfGrant(trx, grantId));
    }
  };
}
