import { expect } from 'chai';
import { decodeJwt } from 'jose';

import { pruneRevokedTokens } from '../../lib/oidc/tokens/revoked-tokens.ts';
import { openDatabase } from '../../lib/storage/database.ts';
import { createApplication } from '../support/fixtures.ts';
import { startService, type TestService } from '../support/service.ts';
import { ifSet } from '../support/values.ts';
import {
  accessTokenType,
  delegationSetup,
  exchange,
  expectIssued,
  expectOAuthError,
  userAccessToken,
} from '../token-exchange/support.ts';

const managementRole = 'management-api-access';

/**
 * RFC 7009 for our JWT access tokens: the client the token was issued to revokes it at
 * /oidc/token/revocation (200), and from then on it is refused as a subject token and at the
 * management API, on every instance, until it would have expired anyway. Anyone else's
 * revocation answers 200 and changes nothing.
 */
describe('revocation of JWT access tokens', () => {
  let service: TestService;
  let other: TestService;
  let setup: Awaited<ReturnType<typeof delegationSetup>>;

  before(async () => {
    service = await startService();
    other = await startService({ dbUrl: service.config.dbUrl, env: { ENDPOINT: service.config.endpoint } });
    setup = await delegationSetup(service);
  });
  after(async () => {
    await ifSet(other)?.stop();
    await ifSet(service)?.stop();
  });

  const basic = (client: { id: string; secret: string }) =>
    `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString('base64')}`;

  /** POST /oidc/token/revocation, authenticated as a confidential client (Basic). */
  const revoke = (at: TestService, client: { id: string; secret: string }, token: string, hint?: string) =>
    at.http.post('oidc/token/revocation', {
      form: { token, ...(hint && { token_type_hint: hint }) },
      headers: { authorization: basic(client) },
      responseType: 'text',
    });

  /** An application holding the management role and its client credentials token. */
  async function managementMachine() {
    const application = await createApplication(service, 'MachineToMachine');
    expect(
      (await service.api.post(`applications/${application.id}/roles`, { json: { roleIds: [managementRole] } }))
        .statusCode,
    ).to.equal(201);
    const response = await service.token(application.id, application.secret, {
      grant_type: 'client_credentials',
      resource: service.config.managementApiResource,
      scope: 'all',
    });
    expect(response.statusCode).to.equal(200);
    return { application, token: String(response.body.access_token) };
  }

  const listApplications = (at: TestService, token: string) =>
    at.http.get('api/applications', { headers: { authorization: `Bearer ${token}` } });

  const exchangeForB = (token: string) =>
    exchange(service, setup.backend, {
      subject_token: token,
      subject_token_type: accessTokenType,
      resource: setup.apiB.resource.indicator,
      scope: 'read:b',
    });

  describe('at the management API', () => {
    it('answers 200 to the owning client, and the token is refused at once on both instances', async () => {
      const { application, token } = await managementMachine();
      expect((await listApplications(other, token)).statusCode).to.equal(200);

      const revocation = await revoke(service, application, token, 'access_token');
      expect(revocation.statusCode, String(revocation.body)).to.equal(200);
      expect(revocation.body).to.equal('');
      expect(revocation.headers['content-type']).to.match(/^text\/plain/);

      for (const at of [service, other]) {
        const refused = await listApplications(at, token);
        expect(refused.statusCode, JSON.stringify(refused.body)).to.equal(401);
        expect(refused.body).to.include({ code: 'auth.unauthorized' });
        expect(refused.body.message).to.match(/revoked/i);
      }
      // A fresh token of the same application still works: only that token was revoked.
      const fresh = await service.token(application.id, application.secret, {
        grant_type: 'client_credentials',
        resource: service.config.managementApiResource,
        scope: 'all',
      });
      expect((await listApplications(service, String(fresh.body.access_token))).statusCode).to.equal(200);
    });

    it('answers 200 to another client and changes nothing', async () => {
      const { token } = await managementMachine();
      const stranger = await createApplication(service, 'MachineToMachine');
      const revocation = await revoke(service, stranger, token);
      expect(revocation.statusCode).to.equal(200);
      expect((await listApplications(service, token)).statusCode).to.equal(200);
      expect((await listApplications(other, token)).statusCode).to.equal(200);
    });

    it('revoking twice, or through the other instance, answers 200 each time', async () => {
      const { application, token } = await managementMachine();
      expect((await revoke(other, application, token)).statusCode).to.equal(200);
      expect((await revoke(service, application, token)).statusCode).to.equal(200);
      expect((await listApplications(service, token)).statusCode).to.equal(401);
    });

    it('concurrent revocations of one token on both instances all answer 200 and record it once', async () => {
      const { application, token } = await managementMachine();
      const answers = await Promise.all(
        [service, other, service, other, service, other].map((at) => revoke(at, application, token)),
      );
      expect(answers.map(({ statusCode }) => statusCode)).to.deep.equal([200, 200, 200, 200, 200, 200]);
      for (const at of [service, other]) {
        expect((await listApplications(at, token)).statusCode).to.equal(401);
      }
      const db = openDatabase(service.config.dbUrl);
      try {
        expect(
          await db('revoked_tokens')
            .where({ jti: decodeJwt(token).jti })
            .count({ n: '*' })
            .first(),
        ).to.satisfy(({ n }: { n: number | string }) => Number(n) === 1);
      } finally {
        await db.destroy();
      }
    });

    it('still authenticates the client first: a wrong secret is 401 invalid_client and revokes nothing', async () => {
      const { application, token } = await managementMachine();
      const response = await service.http.post('oidc/token/revocation', {
        form: { token },
        headers: { authorization: basic({ id: application.id, secret: 'not-the-secret' }) },
      });
      expect(response.statusCode).to.equal(401);
      expect(response.body).to.include({ error: 'invalid_client' });
      expect((await listApplications(service, token)).statusCode).to.equal(200);
    });
  });

  describe('as a subject token', () => {
    it('a user token revoked by the front end it was issued to is refused as revoked', async () => {
      const token = await userAccessToken(service, setup.frontend.id, setup.user, setup.apiA.resource.indicator);
      expectIssued(await exchangeForB(token));

      // The front end is a public client: it authenticates with its client_id alone.
      const revocation = await service.http.post('oidc/token/revocation', {
        form: { token, client_id: setup.frontend.id },
        responseType: 'text',
      });
      expect(revocation.statusCode, String(revocation.body)).to.equal(200);
      expectOAuthError(await exchangeForB(token), 400, 'invalid_request', /subject_token was revoked/);
    });

    it('a user token "revoked" by the exchanging backend (not its client) still works', async () => {
      const token = await userAccessToken(service, setup.frontend.id, setup.user, setup.apiA.resource.indicator);
      expect((await revoke(service, setup.backend, token)).statusCode).to.equal(200);
      expectIssued(await exchangeForB(token));
    });
  });

  describe('tokens that are not ours', () => {
    it('answers 200 to a JWT-shaped string, a foreign JWT and an unknown opaque token, with no effect', async () => {
      const stranger = await createApplication(service, 'MachineToMachine');
      const header = Buffer.from(JSON.stringify({ alg: 'ES256', typ: 'at+jwt' })).toString('base64url');
      const payload = Buffer.from(JSON.stringify({ jti: 'x', exp: Math.floor(Date.now() / 1000) + 60 })).toString(
        'base64url',
      );
      for (const token of [`${header}.${payload}.c2ln`, 'abc.def.ghi', 'not-a-token-at-all']) {
        const response = await revoke(service, stranger, token);
        expect(response.statusCode, `${token}: ${String(response.body)}`).to.equal(200);
      }
    });
  });

  describe('when the database fails', () => {
    it('answers server_error, not 200, and the client can revoke again once it is back', async () => {
      const { application, token } = await managementMachine();
      const db = openDatabase(service.config.dbUrl);
      try {
        // The denylist cannot be read: the revocation cannot tell whether the token is ours to revoke.
        await db.schema.renameTable('revoked_tokens', 'revoked_tokens_away');
        await db('cache_versions').where({ name: 'revokedTokens' }).increment('version', 1);
        const refused = await service.http.post('oidc/token/revocation', {
          form: { token },
          headers: { authorization: basic(application) },
        });
        expect(refused.statusCode).to.be.at.least(500);
        expect(refused.body).to.include({ error: 'server_error' });
      } finally {
        await db.schema.renameTable('revoked_tokens_away', 'revoked_tokens');
        await db.destroy();
      }
      expect((await listApplications(service, token)).statusCode, 'not revoked yet').to.equal(200);
      expect((await revoke(service, application, token)).statusCode).to.equal(200);
      expect((await listApplications(service, token)).statusCode).to.equal(401);
    });
  });

  describe('the denylist', () => {
    it('keeps a revoked token until it expires; housekeeping prunes it after', async () => {
      const { application, token } = await managementMachine();
      expect((await revoke(service, application, token)).statusCode).to.equal(200);
      const { jti, exp } = decodeJwt(token);
      const db = openDatabase(service.config.dbUrl);
      try {
        const row = await db('revoked_tokens').where({ jti }).first();
        expect(row).to.include({ client_id: application.id });
        expect(Number(row.expires_at)).to.equal(exp! * 1000);
        expect(await pruneRevokedTokens(db, exp! * 1000 + 5_000), 'within the clock tolerance').to.equal(0);
        expect(await db('revoked_tokens').where({ jti }).first()).to.not.equal(undefined);
        expect(await pruneRevokedTokens(db, exp! * 1000 + 120_000)).to.be.at.least(1);
        expect(await db('revoked_tokens').where({ jti }).first()).to.equal(undefined);
      } finally {
        await db.destroy();
      }
    });
  });
});
