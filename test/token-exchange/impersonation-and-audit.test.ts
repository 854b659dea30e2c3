import { assert, expect } from 'chai';
import { createRemoteJWKSet, jwtVerify } from 'jose';

import { openDatabase } from '../../lib/storage/database.ts';
import { createApplication } from '../support/fixtures.ts';
import { adminClient, startService, type TestService } from '../support/service.ts';
import { unique } from '../support/values.ts';
import {
  accessTokenType,
  type AuditEntry,
  auditLog,
  claimsOf,
  delegationSetup,
  exchange,
  expectIssued,
  expectOAuthError,
  impersonationTokenType,
  tokenExchange,
  userAccessToken,
  waitForLog,
} from './support.ts';

const logKey = 'ExchangeTokenBy.TokenExchange';

describe('token exchange: impersonation subject tokens and the audit log', () => {
  let service: TestService;
  let setup: Awaited<ReturnType<typeof delegationSetup>>;
  let subjectToken: string;
  /** Every token and secret this file handles: none may appear in the audit log. */
  const secrets = new Set<string>();
  const keep = (value: string) => {
    secrets.add(value);
    return value;
  };

  before(async () => {
    service = await startService();
    setup = await delegationSetup(service);
    keep(setup.backend.secret);
    keep(adminClient.secret);
    subjectToken = keep(await userAccessToken(service, setup.frontend.id, setup.user, setup.apiA.resource.indicator));
  });
  after(() => service.stop());

  const apiB = () => setup.apiB.resource.indicator;

  async function createSubjectToken(userId: string, context?: Record<string, unknown>) {
    const response = await service.api.post('subject-tokens', { json: { userId, ...(context && { context }) } });
    expect(response.statusCode, JSON.stringify(response.body)).to.equal(201);
    keep(response.body.subjectToken);
    return response.body as { subjectToken: string; expiresIn: number };
  }

  const impersonate = (
    token: string,
    application: { id: string; secret: string } = setup.backend,
    extra: Record<string, string> = {},
  ) =>
    exchange(service, application, {
      subject_token: token,
      subject_token_type: impersonationTokenType,
      resource: apiB(),
      scope: 'read:b write:b delete:b',
      ...extra,
    });

  async function withDatabase<T>(use: (db: ReturnType<typeof openDatabase>) => Promise<T>): Promise<T> {
    const db = openDatabase(service.config.dbUrl);
    try {
      return await use(db);
    } finally {
      await db.destroy();
    }
  }

  describe('impersonation', () => {
    it('POST /api/subject-tokens answers 201 {subjectToken, expiresIn: 600}', async () => {
      const response = await service.api.post('subject-tokens', {
        json: { userId: setup.user.id, context: { ticket: 'T-1' } },
      });
      expect(response.statusCode, JSON.stringify(response.body)).to.equal(201);
      expect(Object.keys(response.body).sort()).to.deep.equal(['expiresIn', 'subjectToken']);
      expect(response.body.expiresIn).to.equal(600);
      expect(response.body.subjectToken).to.be.a('string').with.length.above(30);
      keep(response.body.subjectToken);
    });

    it('exchanges it for a token for the user, acted by the application that created it', async () => {
      const { subjectToken: token } = await createSubjectToken(setup.user.id);
      const response = await impersonate(token);
      const body = expectIssued(response);
      keep(body.access_token);
      expect(body).to.include({
        issued_token_type: accessTokenType,
        token_type: 'Bearer',
        expires_in: 900,
        scope: 'read:b write:b',
      });

      const jwks = createRemoteJWKSet(new URL(`${service.url}/oidc/jwks`));
      const { payload } = await jwtVerify(body.access_token, jwks, {
        issuer: `${service.url}/oidc`,
        audience: apiB(),
        typ: 'at+jwt',
      });
      expect(payload).to.include({
        sub: setup.user.id,
        client_id: setup.backend.id,
        aud: apiB(),
        scope: 'read:b write:b',
      });
      expect(payload.act).to.deep.equal({ sub: adminClient.id });
    });

    it('refuses it the second time: single use (400 invalid_request)', async () => {
      const { subjectToken: token } = await createSubjectToken(setup.user.id);
      expectIssued(await impersonate(token));
      expectOAuthError(await impersonate(token), 400, 'invalid_request', /used|single use/);
    });

    it('lets exactly one of two simultaneous exchanges of one token succeed', async () => {
      const { subjectToken: token } = await createSubjectToken(setup.user.id);
      const responses = await Promise.all([impersonate(token), impersonate(token), impersonate(token)]);
      const statuses = responses.map(({ statusCode }) => statusCode).sort();
      expect(statuses).to.deep.equal([200, 400, 400]);
      for (const response of responses.filter(({ statusCode }) => statusCode === 400)) {
        expectOAuthError(response, 400, 'invalid_request', /used|single use/);
      }
    });

    it('does not consume the token when the application may not exchange', async () => {
      const { subjectToken: token } = await createSubjectToken(setup.user.id);
      const disabled = await createApplication(service, 'MachineToMachine');
      expectOAuthError(
        await impersonate(token, disabled),
        400,
        'unauthorized_client',
        'token exchange is not allowed for this application',
      );
      expectIssued(await impersonate(token));
    });

    it('answers 404 for an unknown user, and 400 for a missing userId', async () => {
      const unknown = await service.api.post('subject-tokens', { json: { userId: 'no-such-user' } });
      expect(unknown.statusCode).to.equal(404);
      expect(unknown.body.code).to.equal('entity.not_exists_with_id');
      const missing = await service.api.post('subject-tokens', { json: {} });
      expect(missing.statusCode).to.equal(400);
      expect(missing.body.code).to.equal('guard.invalid_input');
    });

    it('requires management authentication', async () => {
      const response = await service.http.post('api/subject-tokens', { json: { userId: setup.user.id } });
      expect(response.statusCode).to.equal(401);
    });

    it('stores the token only hashed: no column of subject_tokens contains it', async () => {
      const { subjectToken: token } = await createSubjectToken(setup.user.id, { reason: 'support' });
      const rows = await withDatabase((db) => db('subject_tokens').select('*'));
      expect(rows.length).to.be.greaterThan(0);
      const dump = JSON.stringify(rows);
      expect(dump).not.to.include(token);
      const randomPart = token.replace(/^[a-z]+_/, '');
      expect(dump).not.to.include(randomPart);
      expect(dump).not.to.include(randomPart.slice(0, 20));
      for (const row of rows as Array<Record<string, unknown>>) {
        for (const value of Object.values(row)) {
          expect(String(value)).not.to.include(token);
        }
      }
    });

    it('refuses an expired impersonation token', async () => {
      const { subjectToken: token } = await createSubjectToken(setup.user.id);
      // Ten minutes pass: age every unused token of this user in the database.
      await withDatabase((db) =>
        db('subject_tokens')
          .where({ user_id: setup.user.id })
          .whereNull('consumed_at')
          .update({ expires_at: Date.now() - 1000 }),
      );
      expectOAuthError(await impersonate(token), 400, 'invalid_request', /expired/);
    });

    it('refuses an unknown impersonation token', async () => {
      expectOAuthError(await impersonate('sub_not-a-real-token'), 400, 'invalid_request', /subject_token/);
    });

    it("takes an impersonation token sent as an access token (Logto's legacy form), not an access token as an impersonation token", async () => {
      const { subjectToken: token } = await createSubjectToken(setup.user.id);
      expectOAuthError(await impersonate(subjectToken), 400, 'invalid_request', /impersonation/);
      const asAccess = expectIssued(
        await exchange(service, setup.backend, {
          subject_token: token,
          subject_token_type: accessTokenType,
          resource: apiB(),
          scope: 'read:b',
        }),
      );
      expect(claimsOf(asAccess.access_token)).to.include({ sub: setup.user.id, aud: apiB() });
      // Still single use, whichever type named it.
      expectOAuthError(await impersonate(token), 400, 'invalid_request', /already used/);
    });

    it("without a resource, gives a token for userinfo (Logto's default audience) with the OpenID scopes asked for", async () => {
      const { subjectToken: token } = await createSubjectToken(setup.user.id);
      const issued = expectIssued(
        await exchange(service, setup.backend, {
          subject_token: token,
          subject_token_type: impersonationTokenType,
          scope: 'openid profile read:b',
        }),
      );
      expect(issued).to.include({ token_type: 'Bearer', scope: 'openid profile' });
      expect(issued.expires_in).to.be.within(1, 3600);
      const me = await service.http.get('oidc/me', { headers: { authorization: `Bearer ${issued.access_token}` } });
      expect(me.statusCode, JSON.stringify(me.body)).to.equal(200);
      expect(me.body).to.include({ sub: setup.user.id });
      // A user's own token still names the API it is exchanged for (the contract): 400 invalid_target.
      expectOAuthError(
        await exchange(service, setup.backend, { subject_token: subjectToken, subject_token_type: accessTokenType }),
        400,
        'invalid_target',
      );
    });

    it("with organization_id, gives the organization's token with the organization scopes the user holds there", async () => {
      const organization = (await service.api.post('organizations', { json: { name: unique('org') } })).body;
      const scope = (await service.api.post('organization-scopes', { json: { name: unique('read:org') } })).body;
      const role = (await service.api.post('organization-roles', { json: { name: unique('reader') } })).body;
      expect(
        (await service.api.post(`organization-roles/${role.id}/scopes`, { json: { organizationScopeIds: [scope.id] } }))
          .statusCode,
      ).to.equal(201);
      const orgToken = async (organizationId: string, scopes: string) =>
        exchange(service, setup.backend, {
          subject_token: (await createSubjectToken(setup.user.id)).subjectToken,
          subject_token_type: impersonationTokenType,
          organization_id: organizationId,
          scope: scopes,
        });
      // Not a member: 403 access_denied.
      expectOAuthError(await orgToken(organization.id, scope.name), 403, 'access_denied');
      expect(
        (await service.api.post(`organizations/${organization.id}/users`, { json: { userIds: [setup.user.id] } }))
          .statusCode,
      ).to.equal(201);
      expect(
        (
          await service.api.post(`organizations/${organization.id}/users/${setup.user.id}/roles`, {
            json: { organizationRoleIds: [role.id] },
          })
        ).statusCode,
      ).to.equal(201);
      const issued = expectIssued(await orgToken(organization.id, `${scope.name} read:b`));
      expect(issued.scope).to.equal(scope.name);
      expect(claimsOf(issued.access_token)).to.include({
        sub: setup.user.id,
        aud: `urn:logto:organization:${organization.id}`,
        scope: scope.name,
      });
      // The organization's token is for the organization alone.
      expectOAuthError(
        await exchange(service, setup.backend, {
          subject_token: (await createSubjectToken(setup.user.id)).subjectToken,
          subject_token_type: impersonationTokenType,
          organization_id: organization.id,
          resource: apiB(),
        }),
        400,
        'invalid_request',
        /organization_id/,
      );
    });

    it('refuses impersonating a suspended user', async () => {
      const user = (await service.api.post('users', { json: { username: unique('s') } })).body as { id: string };
      const { subjectToken: token } = await createSubjectToken(user.id);
      await service.api.patch(`users/${user.id}/is-suspended`, { json: { isSuspended: true } });
      expectOAuthError(await impersonate(token), 400, 'invalid_request', /suspended/);
    });

    it('refuses an impersonation token whose user was deleted since', async () => {
      const user = (await service.api.post('users', { json: { username: unique('d') } })).body as { id: string };
      const { subjectToken: token } = await createSubjectToken(user.id);
      expect((await service.api.delete(`users/${user.id}`)).statusCode).to.equal(204);
      expectOAuthError(await impersonate(token), 400, 'invalid_request');
    });
  });

  describe('audit log (GET /api/logs)', () => {
    const forApplication = (applicationId: string) => ({ logKey, applicationId });

    it('records a successful exchange: application, user, resource, scopes requested and issued', async () => {
      const backend = await createApplication(service, 'MachineToMachine', {
        customClientMetadata: { allowTokenExchange: true },
      });
      keep(backend.secret);
      const body = expectIssued(
        await exchange(service, backend, {
          subject_token: subjectToken,
          subject_token_type: accessTokenType,
          resource: apiB(),
          scope: 'read:b write:b delete:b',
        }),
      );
      keep(body.access_token);
      const entry = await waitForLog(
        service,
        forApplication(backend.id),
        (found) => found.payload.result === 'Success',
      );
      expect(entry.key).to.equal(logKey);
      expect(entry.id).to.be.a('string');
      expect(entry.createdAt).to.be.a('number');
      expect(Math.abs(entry.createdAt - Date.now())).to.be.below(60_000);
      expect(entry.payload).to.include({ result: 'Success', applicationId: backend.id, userId: setup.user.id });
      expect(entry.payload.params.resource).to.equal(apiB());
      expect(entry.payload.params.scopesRequested).to.deep.equal(['read:b', 'write:b', 'delete:b']);
      expect(entry.payload.params.scopesIssued).to.deep.equal(['read:b', 'write:b']);
      expect(entry.payload).not.to.have.property('error');

      // Also found through the user filter.
      const byUser = await auditLog(service, { logKey, userId: setup.user.id });
      expect(byUser.map(({ id }) => id)).to.include(entry.id);
    });

    it('records an impersonated exchange with its actor', async () => {
      const backend = await createApplication(service, 'MachineToMachine', {
        customClientMetadata: { allowTokenExchange: true },
      });
      keep(backend.secret);
      const { subjectToken: token } = await createSubjectToken(setup.user.id);
      keep(expectIssued(await impersonate(token, backend)).access_token);
      const entry = await waitForLog(
        service,
        forApplication(backend.id),
        (found) => found.payload.result === 'Success',
      );
      expect(entry.payload).to.include({ applicationId: backend.id, userId: setup.user.id });
      expect(entry.payload.params.subjectTokenType).to.equal(impersonationTokenType);
      expect(entry.payload.params.actor).to.equal(adminClient.id);
    });

    it('records a refused exchange (unauthorized_client) as an Error entry with error and error_description', async () => {
      const disabled = await createApplication(service, 'MachineToMachine');
      keep(disabled.secret);
      expectOAuthError(
        await exchange(service, disabled, {
          subject_token: subjectToken,
          subject_token_type: accessTokenType,
          resource: apiB(),
          scope: 'read:b',
        }),
        400,
        'unauthorized_client',
      );
      const entry = await waitForLog(service, forApplication(disabled.id), (found) => found.payload.result === 'Error');
      expect(entry.key).to.equal(logKey);
      expect(entry.payload.applicationId).to.equal(disabled.id);
      expect(entry.payload.error).to.deep.equal({
        error: 'unauthorized_client',
        error_description: 'token exchange is not allowed for this application',
      });
      expect(entry.payload.params.resource).to.equal(apiB());
    });

    it('records an exchange refused for its subject token or its resource as Error entries', async () => {
      const backend = await createApplication(service, 'MachineToMachine', {
        customClientMetadata: { allowTokenExchange: true },
      });
      keep(backend.secret);
      const garbage = keep(`garbage-subject-${Math.random().toString(36).slice(2)}`);
      expectOAuthError(
        await exchange(service, backend, {
          subject_token: garbage,
          subject_token_type: accessTokenType,
          resource: apiB(),
        }),
        400,
        'invalid_request',
      );
      expectOAuthError(
        await exchange(service, backend, {
          subject_token: subjectToken,
          subject_token_type: accessTokenType,
          resource: 'https://nowhere.example.com',
        }),
        400,
        'invalid_target',
      );
      const badToken = await waitForLog(
        service,
        forApplication(backend.id),
        (found) => found.payload.error?.error === 'invalid_request',
      );
      expect(badToken.payload.result).to.equal('Error');
      expect(badToken.payload.error.error_description).to.match(/subject_token/);
      const badTarget = await waitForLog(
        service,
        forApplication(backend.id),
        (found) => found.payload.error?.error === 'invalid_target',
      );
      expect(badTarget.payload.result).to.equal('Error');
      expect(badTarget.payload.error.error_description).to.include('https://nowhere.example.com');
      expect(badTarget.payload.params.resource).to.equal('https://nowhere.example.com');
    });

    it('records a failed client authentication as an Error entry (invalid_client)', async () => {
      const marker = `https://marker-${Math.random().toString(36).slice(2)}.example.com`;
      const wrongSecret = keep(`wrong-secret-${Math.random().toString(36).slice(2)}`);
      expectOAuthError(
        await exchange(
          service,
          { id: setup.backend.id, secret: wrongSecret },
          { subject_token: subjectToken, subject_token_type: accessTokenType, resource: marker },
        ),
        401,
        'invalid_client',
      );
      // The same with the secret in the body (client_secret_post).
      const posted = await service.http.post('oidc/token', {
        form: {
          grant_type: tokenExchange,
          client_id: setup.backend.id,
          client_secret: wrongSecret,
          subject_token: subjectToken,
          subject_token_type: accessTokenType,
          resource: marker,
        },
      });
      expectOAuthError(posted, 401, 'invalid_client');
      const entry = await waitForLog(
        service,
        { logKey },
        (found) => found.payload.params?.resource === marker && found.payload.error?.error === 'invalid_client',
      );
      expect(entry.payload.result).to.equal('Error');
    });

    it('never contains a subject token, an issued token or a client secret', async () => {
      // One more of each kind, then wait until it is written.
      const body = expectIssued(
        await exchange(service, setup.backend, {
          subject_token: subjectToken,
          subject_token_type: accessTokenType,
          resource: apiB(),
          scope: 'read:b',
        }),
      );
      keep(body.access_token);
      const jti = String(claimsOf(body.access_token).jti);
      const latest = await waitForLog(
        service,
        forApplication(setup.backend.id),
        (found) => found.payload.result === 'Success' && Date.now() - found.createdAt < 30_000,
      );
      assert.exists(latest);

      const entries: AuditEntry[] = [];
      for (let page = 1; ; page++) {
        const response = await service.api.get('logs', { searchParams: { page, page_size: 100 } });
        expect(response.statusCode).to.equal(200);
        entries.push(...(response.body as AuditEntry[]));
        const total = Number(response.headers['total-number']);
        if (entries.length >= total || (response.body as AuditEntry[]).length === 0) {
          break;
        }
      }
      const exchanges = entries.filter(({ key }) => key === logKey);
      expect(exchanges.length).to.be.greaterThan(5);
      const dump = JSON.stringify(entries);
      expect(secrets.size).to.be.greaterThan(8);
      for (const secret of secrets) {
        expect(dump.includes(secret), `the audit log contains ${secret.slice(0, 12)}…`).to.equal(false);
        // Not even a recognisable part of a JWT (its signature) or of a token.
        const tail = secret.split('.').pop()!;
        if (tail.length >= 20) {
          expect(dump.includes(tail), `the audit log contains the end of ${secret.slice(0, 12)}…`).to.equal(false);
        }
      }
      expect(dump).not.to.include(jti);
    });
  });
});
