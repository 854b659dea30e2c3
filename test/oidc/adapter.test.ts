import { expect } from 'chai';
import type { Knex } from 'knex';

import { createAdapter, tokenDigest } from '../../lib/oidc/adapter.ts';
import { purgeExpiredModels } from '../../lib/sessions/queries.ts';
import { openDatabase } from '../../lib/storage/database.ts';
import { migrateToLatest } from '../../lib/storage/migrate.ts';
import { freshDatabaseUrl } from '../support/database.ts';
import { createApplication } from '../support/fixtures.ts';
import { startService, type TestService } from '../support/service.ts';

describe('oidc-provider storage', () => {
  describe('the Knex adapter', () => {
    let db: Knex;
    const Adapter = () => createAdapter(db, () => Promise.resolve(undefined));
    before(async () => {
      db = openDatabase(await freshDatabaseUrl());
      await migrateToLatest(db);
    });
    after(() => db.destroy());

    it('stores, finds by id, uid and user code, consumes and destroys', async () => {
      const Session = Adapter();
      const sessions = new Session('Session');
      await sessions.upsert('s1', { uid: 'u1', accountId: 'a' }, 60);
      expect(await sessions.find('s1')).to.deep.equal({ uid: 'u1', accountId: 'a' });
      expect(await sessions.findByUid('u1')).to.deep.equal({ uid: 'u1', accountId: 'a' });
      await sessions.upsert('s1', { uid: 'u1', accountId: 'b' }, 60);
      expect(await sessions.find('s1')).to.include({ accountId: 'b' });

      const codes = new (Adapter())('DeviceCode');
      await codes.upsert('d1', { userCode: 'ABCD-EFGH', grantId: 'g1' }, 60);
      expect(await codes.findByUserCode('ABCD-EFGH')).to.include({ grantId: 'g1' });
      await codes.consume('d1');
      expect((await codes.find('d1'))?.consumed).to.be.a('number');

      await sessions.destroy('s1');
      expect(await sessions.find('s1')).to.equal(undefined);
    });

    it('keeps models apart by name and revokes everything of a grant', async () => {
      const tokens = new (Adapter())('AccessToken');
      const refresh = new (Adapter())('RefreshToken');
      await tokens.upsert('same-id', { grantId: 'g2' }, 60);
      await refresh.upsert('same-id', { grantId: 'g2' }, 60);
      await refresh.upsert('other', { grantId: 'g3' }, 60);
      await tokens.revokeByGrantId('g2');
      expect(await tokens.find('same-id')).to.equal(undefined);
      expect(await refresh.find('same-id')).to.equal(undefined);
      expect(await refresh.find('other')).to.include({ grantId: 'g3' });
    });

    it('ignores expired rows and purges them', async () => {
      const tokens = new (Adapter())('AccessToken');
      await tokens.upsert('old', { grantId: 'g4' }, 60);
      await db('oidc_model_instances')
        .where({ id: tokenDigest('old') })
        .update({ expires_at: Date.now() - 1000 });
      expect(await tokens.find('old')).to.equal(undefined);
      expect(await purgeExpiredModels(db)).to.be.at.least(1);
      expect(
        await db('oidc_model_instances')
          .where({ id: tokenDigest('old') })
          .first(),
      ).to.equal(undefined);
    });
  });

  describe('opaque tokens through the provider', () => {
    let service: TestService;
    before(async () => {
      service = await startService();
    });
    after(() => service.stop());

    it('stores a client-credentials token without a resource and introspects it as active', async () => {
      const app = await createApplication(service, 'MachineToMachine');
      const { statusCode, body } = await service.token(app.id, app.secret, { grant_type: 'client_credentials' });
      expect(statusCode).to.equal(200);
      expect(String(body.access_token).split('.')).to.have.length(1);
      const response = await service.http.post('oidc/token/introspection', {
        form: { token: String(body.access_token) },
        headers: { authorization: `Basic ${Buffer.from(`${app.id}:${app.secret}`).toString('base64')}` },
      });
      expect(response.statusCode).to.equal(200);
      expect(response.body).to.include({ active: true, client_id: app.id });
    });
  });
});
