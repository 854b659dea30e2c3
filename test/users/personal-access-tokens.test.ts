import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import type { Knex } from 'knex';

import { openDatabase } from '../../lib/storage/database.ts';
import { expectError, expectStatus } from '../support/expect.ts';
import { createApplication } from '../support/fixtures.ts';
import { logtoManagementClient, startService, type TestService } from '../support/service.ts';
import { ifSet, unique } from '../support/values.ts';
import {
  claimsOf,
  delegationSetup,
  exchange,
  expectIssued,
  expectOAuthError,
  waitForLog,
} from '../token-exchange/support.ts';

const patType = 'urn:logto:token-type:personal_access_token';

type Pat = {
  tenantId: string;
  userId: string;
  name: string;
  value: string;
  createdAt: number;
  expiresAt: number | null;
};

/**
 * Logto's personal access tokens: its management API test (`admin-user.personal-access-tokens`) and
 * its token exchange test (`oidc/token-exchange/personal-access-token`), under our exchange rules
 * (a resource, an application allowed to exchange), with secrets sealed at rest.
 */
describe('personal access tokens', () => {
  let service: TestService;
  let client: ReturnType<typeof logtoManagementClient>;
  let db: Knex;
  let setup: Awaited<ReturnType<typeof delegationSetup>>;
  /** Every token this file makes: none may appear in the audit log. */
  const values: string[] = [];

  before(async () => {
    service = await startService({ env: { SECRETS_ENCRYPTION_KEY: randomBytes(32).toString('base64') } });
    client = logtoManagementClient(service);
    db = openDatabase(service.config.dbUrl);
    setup = await delegationSetup(service);
  });
  after(async () => {
    await ifSet(db)?.destroy();
    await ifSet(service)?.stop();
  });

  const newUser = async (): Promise<{ id: string }> => {
    const response = await service.api.post<{ id: string }>('users', { json: { username: unique('pat') } });
    expectStatus(response, 200);
    return response.body;
  };

  async function createPat(userId: string, name: string, expiresAt?: number): Promise<Pat> {
    const created = await client.POST('/api/users/{userId}/personal-access-tokens', {
      params: { path: { userId } },
      body: { name, ...(expiresAt !== undefined && { expiresAt }) },
    });
    expect(created.response.status, JSON.stringify(created.error)).to.equal(201);
    values.push(created.data!.value);
    return created.data!;
  }

  const list = async (userId: string) =>
    (await client.GET('/api/users/{userId}/personal-access-tokens', { params: { path: { userId } } })).data;

  describe("the management API (Logto's assertions)", () => {
    it('refuses an existing name with 422 user.personal_access_token_name_exists', async () => {
      const user = await newUser();
      await createPat(user.id, 'ci');
      const again = await service.api.post(`users/${user.id}/personal-access-tokens`, { json: { name: 'ci' } });
      expectError(again, 422, 'user.personal_access_token_name_exists');
    });

    it('answers 404 for an unknown user, on every operation', async () => {
      const path = 'users/invalid/personal-access-tokens';
      expectError(await service.api.post(path, { json: { name: 'x' } }), 404, 'entity.not_exists_with_id');
      expectStatus(await service.api.get(path), 404);
      expectStatus(await service.api.patch(path, { json: { currentName: 'x', name: 'y' } }), 404);
      expectStatus(await service.api.post(`${path}/delete`, { json: { name: 'x' } }), 404);
      expectStatus(await service.api.delete(`${path}/x`), 404);
    });

    it('refuses an empty name and an expiresAt that is not in the future with 400', async () => {
      const user = await newUser();
      const path = `users/${user.id}/personal-access-tokens`;
      expectError(await service.api.post(path, { json: { name: '' } }), 400, 'guard.invalid_input');
      const past = await service.api.post(path, { json: { name: 'late', expiresAt: Date.now() - 1000 } });
      expectError(past, 400, 'request.invalid_input');
      expect(await list(user.id)).to.deep.equal([]);
    });

    it('creates, lists (values included) and deletes several tokens', async () => {
      const user = await newUser();
      const now = Date.now();
      const first = await createPat(user.id, 'first', now + 60_000);
      const second = await createPat(user.id, 'second');
      expect(first).to.deep.include({ userId: user.id, name: 'first', expiresAt: now + 60_000 });
      expect(first.value).to.match(/^pat_[\dA-Za-z]{32}$/);
      expect(second.expiresAt).to.equal(null);
      expect(second.createdAt).to.be.within(now, Date.now());
      expect(await list(user.id)).to.have.deep.members([first, second]);

      const deleted = await Promise.all([
        client.DELETE('/api/users/{userId}/personal-access-tokens/{name}', {
          params: { path: { userId: user.id, name: 'first' } },
        }),
        client.POST('/api/users/{userId}/personal-access-tokens/delete', {
          params: { path: { userId: user.id } },
          body: { name: 'second' },
        }),
      ]);
      expect(deleted.map(({ response }) => response.status)).to.deep.equal([204, 204]);
      expect(await list(user.id)).to.deep.equal([]);
      expectError(await service.api.delete(`users/${user.id}/personal-access-tokens/first`), 404, 'entity.not_found');
    });

    it('renames by the name in the path or in the body; a taken name is 422, an unknown one 404', async () => {
      const user = await newUser();
      const token = await createPat(user.id, 'old');
      await createPat(user.id, 'taken');

      const renamed = await client.PATCH('/api/users/{userId}/personal-access-tokens/{name}', {
        params: { path: { userId: user.id, name: 'old' } },
        body: { name: 'new/name' },
      });
      expect(renamed.response.status).to.equal(200);
      expect(renamed.data).to.deep.equal({ ...token, name: 'new/name' });

      const byBody = await client.PATCH('/api/users/{userId}/personal-access-tokens', {
        params: { path: { userId: user.id } },
        body: { currentName: 'new/name', name: 'newer' },
      });
      expect(byBody.response.status).to.equal(200);
      expect(byBody.data).to.deep.include({ userId: user.id, name: 'newer', value: token.value });

      const path = `users/${user.id}/personal-access-tokens`;
      expectError(
        await service.api.patch(path, { json: { currentName: 'newer', name: 'taken' } }),
        422,
        'user.personal_access_token_name_exists',
      );
      expectError(await service.api.patch(`${path}/missing`, { json: { name: 'x' } }), 404, 'entity.not_found');
      expectError(await service.api.patch(path, { json: { name: 'x' } }), 400, 'guard.invalid_input');
    });

    it('of ten concurrent creations of one name, one gets 201 and the others 422', async () => {
      const user = await newUser();
      const answers = await Promise.all(
        Array.from({ length: 10 }, () =>
          service.api.post(`users/${user.id}/personal-access-tokens`, { json: { name: 'race' } }),
        ),
      );
      expect(answers.filter(({ statusCode }) => statusCode === 201)).to.have.length(1);
      for (const answer of answers.filter(({ statusCode }) => statusCode !== 201)) {
        expectError(answer, 422, 'user.personal_access_token_name_exists');
      }
      expect(await list(user.id)).to.have.length(1);
    });

    it('stores the token sealed, found by its digest: the row holds no plaintext', async () => {
      const user = await newUser();
      const token = await createPat(user.id, 'sealed');
      const row = await db('personal_access_tokens').where({ user_id: user.id, name: 'sealed' }).first();
      expect(JSON.stringify(row)).to.not.include(token.value.slice(4));
      expect(row.value).to.match(/^enc:v1:/);
      expect(row.value_digest).to.match(/^[\da-f]{64}$/);
    });

    it("deletes a user's tokens with the user", async () => {
      const user = await newUser();
      await createPat(user.id, 'gone');
      expectStatus(await service.api.delete(`users/${user.id}`), 204);
      expect(await db('personal_access_tokens').where({ user_id: user.id })).to.deep.equal([]);
    });
  });

  describe('the exchange (urn:logto:token-type:personal_access_token)', () => {
    const apiB = () => setup.apiB.resource.indicator;
    const exchangePat = (token: string, extra: Record<string, string> = {}) =>
      exchange(service, setup.backend, {
        subject_token: token,
        subject_token_type: patType,
        resource: apiB(),
        ...extra,
      });

    it("gives a JWT for the resource whose sub is the user, with the scopes the user's roles grant, many times", async () => {
      const token = await createPat(setup.user.id, 'exchange');
      for (let time = 0; time < 3; time++) {
        const issued = expectIssued(await exchangePat(token.value, { scope: 'read:b write:b admin:b' }));
        expect(issued.scope).to.equal('read:b write:b');
        const claims = claimsOf(issued.access_token);
        expect(claims).to.include({ sub: setup.user.id, aud: apiB(), scope: 'read:b write:b' });
        expect(claims.client_id).to.equal(setup.backend.id);
        expect(claims).to.not.have.property('act');
      }

      const introspected = await service.http.post('oidc/token/introspection', {
        form: { token: expectIssued(await exchangePat(token.value)).access_token },
        headers: {
          authorization: `Basic ${Buffer.from(`${setup.backend.id}:${setup.backend.secret}`).toString('base64')}`,
        },
      });
      expect(introspected.body).to.include({ active: true, sub: setup.user.id });
    });

    it("issues scope '' for a user whose roles grant none on the resource", async () => {
      const user = await newUser();
      const token = await createPat(user.id, 'no-roles');
      const issued = expectIssued(await exchangePat(token.value, { scope: 'read:b' }));
      expect(issued.scope).to.equal('');
      expect(claimsOf(issued.access_token)).to.include({ sub: user.id, aud: apiB(), scope: '' });
    });

    it("never outlives the token's expiry; an expired token is refused", async () => {
      const user = await newUser();
      const soon = await createPat(user.id, 'soon', Date.now() + 120_000);
      expect(expectIssued(await exchangePat(soon.value)).expires_in).to.be.within(118, 120);

      const brief = await createPat(user.id, 'brief', Date.now() + 300);
      await sleep(400);
      expectOAuthError(await exchangePat(brief.value), 400, 'invalid_request', 'subject_token is expired');
    });

    it('refuses an unknown token, and a deleted one at once', async () => {
      expectOAuthError(
        await exchangePat('pat_invalid'),
        400,
        'invalid_request',
        'subject_token is not a valid personal access token',
      );
      const user = await newUser();
      const token = await createPat(user.id, 'deleted');
      expectIssued(await exchangePat(token.value));
      expectStatus(await service.api.delete(`users/${user.id}/personal-access-tokens/deleted`), 204);
      expectOAuthError(await exchangePat(token.value), 400, 'invalid_request', /not a valid personal access token/);
    });

    it("refuses a suspended user's token at once, and a deleted user's", async () => {
      const user = await newUser();
      const token = await createPat(user.id, 'suspended');
      expectIssued(await exchangePat(token.value));
      expectStatus(await service.api.patch(`users/${user.id}/is-suspended`, { json: { isSuspended: true } }), 200);
      expectOAuthError(await exchangePat(token.value), 400, 'invalid_request', 'the subject user is suspended');

      const other = await newUser();
      const kept = await createPat(other.id, 'kept');
      expectStatus(await service.api.delete(`users/${other.id}`), 204);
      expectOAuthError(await exchangePat(kept.value), 400, 'invalid_request', /not a valid personal access token/);
    });

    it('refuses a client without a secret, an unauthenticated one, and one not allowed to exchange', async () => {
      const token = await createPat(setup.user.id, 'clients');
      const form = { grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange', subject_token: token.value };
      const asPublic = await service.http.post('oidc/token', {
        form: { ...form, subject_token_type: patType, resource: apiB(), client_id: setup.frontend.id },
      });
      expectOAuthError(asPublic, 400, 'unauthorized_client');
      const unauthenticated = await service.http.post('oidc/token', {
        form: { ...form, subject_token_type: patType, resource: apiB(), client_id: setup.backend.id },
      });
      expectOAuthError(unauthenticated, 401, 'invalid_client');

      const notAllowed = await createApplication(service, 'Traditional', {
        oidcClientMetadata: { redirectUris: ['http://localhost:3000'], postLogoutRedirectUris: [] },
      });
      expectOAuthError(
        await exchange(service, notAllowed, {
          subject_token: token.value,
          subject_token_type: patType,
          resource: apiB(),
        }),
        400,
        'unauthorized_client',
      );
    });

    it('is audited by its type, and no token value reaches the audit log', async () => {
      const user = await newUser();
      const token = await createPat(user.id, 'audited');
      expectIssued(await exchangePat(token.value));
      const entry = await waitForLog(
        service,
        { userId: user.id },
        ({ key }) => key === 'ExchangeTokenBy.TokenExchange',
      );
      expect(entry.payload).to.deep.include({ result: 'Success', applicationId: setup.backend.id });
      expect(entry.payload.params).to.deep.include({ subjectTokenType: patType, resource: apiB() });
      // As stored, every entry: the API pages them.
      const all = JSON.stringify(await db('logs').select('*'));
      expect(all).to.include(user.id);
      for (const value of values) {
        expect(all).to.not.include(value);
      }
    });

    it("without a resource gives a token for userinfo and introspection (Logto's default audience)", async () => {
      const token = await createPat(setup.user.id, 'no-resource');
      const issued = expectIssued(
        await exchange(service, setup.backend, {
          subject_token: token.value,
          subject_token_type: patType,
          scope: 'openid profile read:b',
        }),
      );
      expect(issued).to.include({ token_type: 'Bearer', scope: 'openid profile' });
      const me = await service.http.get('oidc/me', { headers: { authorization: `Bearer ${issued.access_token}` } });
      expect(me.statusCode, JSON.stringify(me.body)).to.equal(200);
      expect(me.body).to.include({ sub: setup.user.id });
      const introspected = await service.http.post('oidc/token/introspection', {
        form: { token: issued.access_token, client_id: setup.backend.id, client_secret: setup.backend.secret },
      });
      expect(introspected.body).to.include({ active: true, sub: setup.user.id });
    });
  });
});
