import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';

import { freshDatabaseUrl } from '../support/database.ts';
import { expectError } from '../support/expect.ts';
import { createApplication, createMachineWithScopes, createResource } from '../support/fixtures.ts';
import {
  adminClient,
  logtoManagementClient,
  type ServiceClient,
  startService,
  type TestService,
  type TokenResponse,
} from '../support/service.ts';
import { ifSet } from '../support/values.ts';
import { waitForLog } from '../token-exchange/support.ts';

type Machine = { id: string; indicator: string };

/** A client credentials request authenticated with client_secret_basic. */
const basic = (service: ServiceClient, machine: Machine, secret: string) =>
  service.token(machine.id, secret, { grant_type: 'client_credentials', resource: machine.indicator, scope: 'read' });

/** The same with client_secret_post: the credentials in the form. */
async function post(service: ServiceClient, machine: Machine, secret: string): Promise<TokenResponse> {
  const response = await service.http.post('oidc/token', {
    form: {
      grant_type: 'client_credentials',
      resource: machine.indicator,
      scope: 'read',
      client_id: machine.id,
      client_secret: secret,
    },
  });
  return { statusCode: response.statusCode, headers: response.headers, body: response.body };
}

function expectToken(response: TokenResponse, what: string): void {
  expect(response.statusCode, `${what}: ${JSON.stringify(response.body)}`).to.equal(200);
  expect(response.body.access_token, what).to.be.a('string');
}

function expectInvalidClient(response: TokenResponse, what: string): void {
  expect(response.statusCode, `${what}: ${JSON.stringify(response.body)}`).to.equal(401);
  expect(response.body.error, what).to.equal('invalid_client');
}

async function newMachine(service: ServiceClient): Promise<Machine & { secret: string }> {
  const { resource, scopeIds } = await createResource(service, ['read']);
  const { application } = await createMachineWithScopes(service, [scopeIds.read]);
  return { id: application.id, secret: application.secret, indicator: resource.indicator };
}

async function addSecret(service: ServiceClient, id: string, body: Record<string, unknown>): Promise<string> {
  const created = await service.api.post(`applications/${id}/secrets`, { json: body });
  expect(created.statusCode, JSON.stringify(created.body)).to.equal(201);
  return String(created.body.value);
}

describe('application secrets', () => {
  describe('the management API (Logto shapes, through @logto/api)', () => {
    let service: TestService;
    let apiClient: ReturnType<typeof logtoManagementClient>;
    before(async () => {
      service = await startService();
      apiClient = logtoManagementClient(service);
    });
    after(() => ifSet(service)?.stop());

    it('adds, lists, renames and deletes named secrets', async () => {
      const { id } = await createApplication(service, 'MachineToMachine');
      const expiresAt = Date.now() + 3_600_000;
      const path = { id };

      const first = await apiClient.POST('/api/applications/{id}/secrets', {
        params: { path },
        body: { name: 'Primary', expiresAt },
      });
      expect(first.response.status, JSON.stringify(first.error)).to.equal(201);
      expect(first.data).to.include({ tenantId: 'default', applicationId: id, name: 'Primary', expiresAt });
      expect(first.data?.value).to.match(/^[0-9a-zA-Z]{32}$/);
      expect(first.data?.createdAt).to.be.a('number');
      const second = await apiClient.POST('/api/applications/{id}/secrets', {
        params: { path },
        body: { name: 'Secondary' },
      });
      expect(second.response.status).to.equal(201);
      expect(second.data?.expiresAt).to.equal(null);

      const listed = await apiClient.GET('/api/applications/{id}/secrets', { params: { path } });
      expect(listed.response.status).to.equal(200);
      // The first is Logto's "Default secret", made with the application.
      const [initial, ...added] = listed.data ?? [];
      expect(initial).to.include({ applicationId: id, name: 'Default secret', expiresAt: null });
      expect(added).to.deep.equal([first.data, second.data]);

      const renamed = await apiClient.PATCH('/api/applications/{id}/secrets/{name}', {
        params: { path: { id, name: 'Primary' } },
        body: { name: 'Old primary' },
      });
      expect(renamed.response.status).to.equal(200);
      expect(renamed.data).to.deep.equal({ ...first.data, name: 'Old primary' });

      const deleted = await apiClient.DELETE('/api/applications/{id}/secrets/{name}', {
        params: { path: { id, name: 'Old primary' } },
      });
      expect(deleted.response.status).to.equal(204);
      const after = await apiClient.GET('/api/applications/{id}/secrets', { params: { path } });
      expect(after.data).to.deep.equal([initial, second.data]);
    });

    it('refuses a taken name, an unknown name, a past expiry, a public application, a bad body', async () => {
      const { id } = await createApplication(service, 'Traditional');
      await addSecret(service, id, { name: 'Taken' });
      await addSecret(service, id, { name: 'Other' });

      expectError(
        await service.api.post(`applications/${id}/secrets`, { json: { name: 'Taken' } }),
        422,
        'application.secret_name_exists',
      );
      expectError(
        await service.api.patch(`applications/${id}/secrets/Other`, { json: { name: 'Taken' } }),
        422,
        'application.secret_name_exists',
      );
      expectError(
        await service.api.patch(`applications/${id}/secrets/Missing`, { json: { name: 'New' } }),
        404,
        'entity.not_found',
      );
      expectError(await service.api.delete(`applications/${id}/secrets/Missing`), 404, 'entity.not_found');
      const past = await service.api.post(`applications/${id}/secrets`, {
        json: { name: 'Past', expiresAt: Date.now() - 1000 },
      });
      expectError(past, 400, 'request.invalid_input');
      expect(past.body.message).to.include('expiresAt');
      for (const body of [{ name: '' }, { name: 'x'.repeat(257) }, { name: 'A', value: 'chosen' }, {}]) {
        expectError(await service.api.post(`applications/${id}/secrets`, { json: body }), 400, 'guard.invalid_input');
      }
      expectError(
        await service.api.post('applications/no-such-app/secrets', { json: { name: 'A' } }),
        404,
        'entity.not_exists_with_id',
      );
      expectError(await service.api.get('applications/no-such-app/secrets'), 404, 'entity.not_exists_with_id');
      const spa = await createApplication(service, 'SPA');
      expectError(
        await service.api.post(`applications/${spa.id}/secrets`, { json: { name: 'A' } }),
        422,
        'entity.db_constraint_violated',
      );
      expect(
        (await service.api.get(`applications/${id}/secrets`)).body.map((secret: { name: string }) => secret.name),
      ).to.deep.equal(['Default secret', 'Taken', 'Other']);
    });

    it('needs a management token', async () => {
      const { id } = await createApplication(service, 'MachineToMachine');
      const anonymous = await service.http.get(`api/applications/${id}/secrets`);
      expect(anonymous.statusCode).to.equal(401);
      const created = await service.http.post(`api/applications/${id}/secrets`, { json: { name: 'A' } });
      expect(created.statusCode).to.equal(401);
    });
  });

  describe('at the token endpoint', () => {
    let service: TestService;
    before(async () => {
      service = await startService({ logs: true });
    });
    after(() => ifSet(service)?.stop());

    it('accepts the Default secret and every valid named one, by client_secret_basic and client_secret_post', async () => {
      const machine = await newMachine(service);
      const first = await addSecret(service, machine.id, { name: 'first' });
      const second = await addSecret(service, machine.id, { name: 'second', expiresAt: Date.now() + 600_000 });
      for (const secret of [machine.secret, first, second]) {
        expectToken(await basic(service, machine, secret), 'basic');
        expectToken(await post(service, machine, secret), 'post');
      }
      expectInvalidClient(await basic(service, machine, `${first}x`), 'a wrong secret');
      expectInvalidClient(await post(service, machine, 'wrong'), 'a wrong secret (post)');

      // One application's secret is not another's.
      const other = await newMachine(service);
      expectInvalidClient(await basic(service, { ...other, indicator: machine.indicator }, first), "another's secret");
    });

    it("keeps a legacy secret working and shown: the bootstrap admin's", async () => {
      expect((await service.api.get(`applications/${adminClient.id}`)).body.secret).to.equal(adminClient.secret);
      expectToken(
        await service.token(adminClient.id, adminClient.secret, {
          grant_type: 'client_credentials',
          resource: service.config.managementApiResource,
          scope: 'all',
        }),
        'the legacy secret',
      );
    });

    it('stops an expired secret when it expires, and logs which one without its value', async () => {
      const machine = await newMachine(service);
      const expiring = await addSecret(service, machine.id, { name: 'expiring', expiresAt: Date.now() + 1500 });
      expectToken(await basic(service, machine, expiring), 'before expiry');
      await sleep(1600);
      expectInvalidClient(await basic(service, machine, expiring), 'after expiry');
      expectInvalidClient(await post(service, machine, expiring), 'after expiry (post)');
      expectToken(await basic(service, machine, machine.secret), 'the Default secret');
      expect(service.logs()).to.include('client authentication with an expired secret').and.include('expiring');
      expect(service.logs()).to.not.include(expiring);
    });

    it('shows no secret value in the audit log', async () => {
      const machine = await newMachine(service);
      const value = await addSecret(service, machine.id, { name: 'audited' });
      const entry = await waitForLog(service, { targetId: machine.id }, (found) =>
        JSON.stringify(found).includes('/api/applications/:id/secrets'),
      );
      expect(JSON.stringify(entry)).to.not.include(value);
      expect(service.logs()).to.not.include(value);
    });
  });

  describe('failures with named secrets count against the client-auth throttle', () => {
    let service: TestService;
    before(async () => {
      service = await startService({ env: { CLIENT_AUTH_FAILURE_WINDOW: '30', CLIENT_AUTH_FAILURES_PER_CLIENT: '3' } });
    });
    after(() => ifSet(service)?.stop());

    it('counts expired and wrong secrets: past the limit they get 429, a valid named secret still works', async () => {
      const machine = await newMachine(service);
      const valid = await addSecret(service, machine.id, { name: 'valid' });
      const expiring = await addSecret(service, machine.id, { name: 'expiring', expiresAt: Date.now() + 1000 });
      await sleep(1100);
      expectInvalidClient(await basic(service, machine, expiring), 'expired');
      expectInvalidClient(await post(service, machine, expiring), 'expired (post)');
      expectInvalidClient(await basic(service, machine, 'wrong'), 'wrong');
      for (const response of [await basic(service, machine, expiring), await post(service, machine, 'wrong')]) {
        expect(response.statusCode, JSON.stringify(response.body)).to.equal(429);
        expect(response.body.error).to.equal('too_many_attempts');
      }
      for (const response of [await basic(service, machine, valid), await post(service, machine, valid)]) {
        expect(response.statusCode, JSON.stringify(response.body)).to.equal(200);
      }
    });
  });

  describe('rotation without downtime, across two instances sharing a database', () => {
    let a: TestService;
    let b: TestService;
    before(async () => {
      // Instances behind one address: one issuer, one management API.
      a = await startService({ dbUrl: await freshDatabaseUrl() });
      b = await startService({ dbUrl: a.config.dbUrl, env: { ENDPOINT: a.config.endpoint } });
    });
    after(async () => {
      await ifSet(a)?.stop();
      await ifSet(b)?.stop();
    });

    it('old and new work together; once the old is deleted only the new works, on every instance', async () => {
      const machine = await newMachine(a);
      const initial = machine.secret;
      // A new application has no legacy secret to delete, only its "Default secret".
      expect((await a.api.get(`applications/${machine.id}`)).body).to.not.have.property('secret');
      expectError(
        await a.api.delete(`applications/${machine.id}/legacy-secret`),
        400,
        'application.no_legacy_secret_found',
      );

      // From the Default secret to another.
      const april = await addSecret(a, machine.id, { name: 'April' });
      for (const service of [a, b]) {
        expectToken(await basic(service, machine, initial), 'Default secret, during the overlap');
        expectToken(await basic(service, machine, april), 'April, during the overlap');
      }
      expect((await b.api.delete(`applications/${machine.id}/secrets/Default%20secret`)).statusCode).to.equal(204);
      for (const service of [a, b]) {
        expectInvalidClient(await basic(service, machine, initial), 'Default secret, deleted');
        expectInvalidClient(await post(service, machine, initial), 'Default secret, deleted (post)');
        expectToken(await basic(service, machine, april), 'April, alone');
      }

      // From one named secret to the next.
      const may = await addSecret(b, machine.id, { name: 'May' });
      for (const service of [a, b]) {
        expectToken(await basic(service, machine, april), 'April, during the overlap');
        expectToken(await post(service, machine, may), 'May, during the overlap');
      }
      expect((await a.api.delete(`applications/${machine.id}/secrets/April`)).statusCode).to.equal(204);
      for (const service of [b, a]) {
        expectInvalidClient(await basic(service, machine, april), 'April, deleted');
        expectToken(await basic(service, machine, may), 'May, alone');
      }

      // A rename changes nothing for the clients.
      const renamed = await b.api.patch(`applications/${machine.id}/secrets/May`, { json: { name: 'Current' } });
      expect(renamed.statusCode).to.equal(200);
      expectToken(await basic(a, machine, may), 'May, renamed');

      // Deleting the application deletes its secrets.
      expect((await a.api.delete(`applications/${machine.id}`)).statusCode).to.equal(204);
      expectInvalidClient(await basic(b, machine, may), 'the application deleted');
    });
  });
});
