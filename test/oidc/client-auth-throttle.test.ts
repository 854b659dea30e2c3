import { setTimeout as sleep } from 'node:timers/promises';

import { expect } from 'chai';
import * as client from 'openid-client';

import { createApplication, createMachineWithScopes, createResource } from '../support/fixtures.ts';
import { freshDatabaseUrl } from '../support/database.ts';
import { startService, type HttpResponse, type TestService, type TokenResponse } from '../support/service.ts';
import { ifSet } from '../support/values.ts';

type Machine = { id: string; secret: string };

const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;

/** 429 with a whole number of seconds to wait and an OAuth error body (RFC 6749 §5.2 shape). */
function expectThrottled(response: TokenResponse | HttpResponse): number {
  expect(response.statusCode, JSON.stringify(response.body)).to.equal(429);
  expect(response.body).to.have.property('error', 'too_many_attempts');
  expect(response.body.error_description)
    .to.be.a('string')
    .and.match(/failed client authentication/i);
  expect(String(response.headers['content-type'])).to.match(/^application\/json/);
  expect(response.headers['cache-control']).to.equal('no-store');
  const retryAfter = Number(response.headers['retry-after']);
  expect(Number.isInteger(retryAfter), `Retry-After: ${String(response.headers['retry-after'])}`).to.equal(true);
  expect(retryAfter).to.be.greaterThan(0);
  return retryAfter;
}

function expectInvalidClient(response: TokenResponse | HttpResponse): void {
  expect(response.statusCode, JSON.stringify(response.body)).to.equal(401);
  expect(response.body).to.have.property('error', 'invalid_client');
}

describe('client authentication throttle', () => {
  describe('per client id', () => {
    let service: TestService;
    let indicator: string;
    let machine: Machine;
    let bystander: Machine;
    before(async () => {
      service = await startService({ env: { CLIENT_AUTH_FAILURE_WINDOW: '3', CLIENT_AUTH_FAILURES_PER_CLIENT: '3' } });
      const { resource, scopeIds } = await createResource(service, ['read']);
      indicator = resource.indicator;
      machine = (await createMachineWithScopes(service, [scopeIds.read])).application;
      bystander = (await createMachineWithScopes(service, [scopeIds.read])).application;
    });
    after(() => ifSet(service)?.stop());

    const credentials = (who: Machine, secret = who.secret) =>
      service.token(who.id, secret, { grant_type: 'client_credentials', resource: indicator, scope: 'read' });

    it('answers 429 with Retry-After after the limit, to the right secret too; after the window the right secret works', async () => {
      for (let attempt = 0; attempt < 3; attempt++) {
        expectInvalidClient(await credentials(machine, 'wrong-secret'));
      }
      expectThrottled(await credentials(machine, 'wrong-secret'));
      const retryAfter = expectThrottled(await credentials(machine));
      expect(retryAfter).to.be.at.most(3);
      // Another client at the same address is not affected.
      expect((await credentials(bystander)).statusCode).to.equal(200);

      await sleep(retryAfter * 1000);
      const again = await credentials(machine);
      expect(again.statusCode, JSON.stringify(again.body)).to.equal(200);
      expect(again.body.access_token).to.be.a('string');
    });

    it('counts secrets posted in the body (client_secret_post) and refuses them while throttled', async () => {
      const posted = (secret: string) =>
        service.http.post('oidc/token', {
          form: {
            grant_type: 'client_credentials',
            client_id: bystander.id,
            client_secret: secret,
            resource: indicator,
            scope: 'read',
          },
        });
      for (let attempt = 0; attempt < 3; attempt++) {
        expectInvalidClient(await posted('wrong-secret'));
      }
      expectThrottled(await posted(bystander.secret));
      expectThrottled(await credentials(bystander));
    });

    it('throttles revocation and introspection, which authenticate clients too', async () => {
      const { application } = await createMachineWithScopes(service, []);
      const at = (path: string, secret: string) =>
        service.http.post(path, {
          form: { token: 'some-token' },
          headers: { authorization: basic(application.id, secret) },
        });
      expectInvalidClient(await at('oidc/token/revocation', 'wrong-secret'));
      expectInvalidClient(await at('oidc/token/introspection', 'wrong-secret'));
      expectInvalidClient(await at('oidc/token/revocation', 'wrong-secret'));
      expectThrottled(await at('oidc/token/introspection', application.secret));
      expectThrottled(await at('oidc/token/revocation', application.secret));
      expectThrottled(await service.token(application.id, application.secret, { grant_type: 'client_credentials' }));
    });

    it('lets an admin unlock an application at once (sentinel-activities/delete, targetType App)', async () => {
      const { application } = await createMachineWithScopes(service, []);
      const request = (secret: string) => service.token(application.id, secret, { grant_type: 'client_credentials' });
      for (let attempt = 0; attempt < 3; attempt++) {
        expectInvalidClient(await request('wrong-secret'));
      }
      expectThrottled(await request(application.secret));
      const unlocked = await service.api.post('sentinel-activities/delete', {
        json: { targetType: 'App', targets: [application.id] },
      });
      expect(unlocked.statusCode, JSON.stringify(unlocked.body)).to.equal(204);
      expect((await request(application.secret)).statusCode).to.equal(200);
    });

    it('limits client ids that do not exist the same way', async () => {
      for (let attempt = 0; attempt < 3; attempt++) {
        expectInvalidClient(await service.token('no-such-client', 'guess', { grant_type: 'client_credentials' }));
      }
      expectThrottled(await service.token('no-such-client', 'guess', { grant_type: 'client_credentials' }));
    });

    it("does not refuse a public client's id, which has no secret to guess (anyone could shut its users out)", async () => {
      const spa = await createApplication(service, 'SPA', {
        oidcClientMetadata: { redirectUris: ['http://app.test/callback'], postLogoutRedirectUris: [] },
      });
      for (let attempt = 0; attempt < 5; attempt++) {
        expectInvalidClient(
          await service.token(spa.id, 'guess', { grant_type: 'refresh_token', refresh_token: 'nope' }),
        );
      }
      const refresh = await service.http.post('oidc/token', {
        form: { grant_type: 'refresh_token', refresh_token: 'nope', client_id: spa.id },
      });
      expect(refresh.statusCode, JSON.stringify(refresh.body)).to.equal(400);
      expect(refresh.body.error).to.equal('invalid_grant');
    });

    it('reaches openid-client as an OAuth error with the status', async () => {
      const { application } = await createMachineWithScopes(service, []);
      for (let attempt = 0; attempt < 3; attempt++) {
        expectInvalidClient(await service.token(application.id, 'wrong-secret', { grant_type: 'client_credentials' }));
      }
      const config = await client.discovery(
        new URL(`${service.url}/oidc`),
        application.id,
        application.secret,
        undefined,
        {
          // eslint-disable-next-line @typescript-eslint/no-deprecated -- deprecated only to stand out: the test service is plain http on 127.0.0.1
          execute: [client.allowInsecureRequests],
        },
      );
      const error = await client.clientCredentialsGrant(config, {}).then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
      expect(error).to.be.instanceOf(client.ResponseBodyError);
      expect(error).to.include({ error: 'too_many_attempts', status: 429 });
    });

    it("does not count requests that fail for other reasons than the client's credentials", async () => {
      const { application } = await createMachineWithScopes(service, []);
      for (let attempt = 0; attempt < 5; attempt++) {
        const refused = await service.token(application.id, application.secret, {
          grant_type: 'client_credentials',
          resource: 'https://unknown.example.com',
        });
        expect(refused.statusCode).to.equal(400);
      }
      expect(
        (await service.token(application.id, application.secret, { grant_type: 'client_credentials' })).statusCode,
      ).to.equal(200);
    });
  });

  describe('per source address', () => {
    let service: TestService;
    before(async () => {
      service = await startService({
        env: {
          TRUST_PROXY: 'true',
          CLIENT_AUTH_FAILURE_WINDOW: '60',
          CLIENT_AUTH_FAILURES_PER_CLIENT: '100',
          CLIENT_AUTH_FAILURES_PER_ADDRESS: '4',
        },
      });
    });
    after(() => ifSet(service)?.stop());

    const from = (address: string, id: string, secret: string) =>
      service.http.post('oidc/token', {
        form: { grant_type: 'client_credentials' },
        headers: { authorization: basic(id, secret), 'x-forwarded-for': address },
      });

    it('refuses an address that failed too often, whatever client it names; other addresses are not affected', async () => {
      const machine = await createApplication(service, 'MachineToMachine');
      for (let attempt = 0; attempt < 4; attempt++) {
        expectInvalidClient(await from('203.0.113.7', `guess-${attempt}`, 'guess'));
      }
      expectThrottled(await from('203.0.113.7', machine.id, machine.secret));
      expect((await from('198.51.100.1', machine.id, machine.secret)).statusCode).to.equal(200);
    });

    it('counts the address the proxy saw (the last X-Forwarded-For entry), not ones the client made up', async () => {
      const machine = await createApplication(service, 'MachineToMachine');
      for (let attempt = 0; attempt < 4; attempt++) {
        expectInvalidClient(await from(`10.0.0.${attempt + 1}, 203.0.113.50`, `guess-${attempt}`, 'guess'));
      }
      expectThrottled(await from('10.0.0.99, 203.0.113.50', machine.id, machine.secret));
    });

    it('answers an overlong client id or a forwarded address that is not one with 401, never 5xx', async () => {
      expectInvalidClient(await from('203.0.113.80', 'x'.repeat(5000), 'guess'));
      expectInvalidClient(await from(`not-an-address-${'y'.repeat(400)}`, 'some-client', 'guess'));
    });

    it('counts an IPv6 /64 as one address', async () => {
      const machine = await createApplication(service, 'MachineToMachine');
      for (let attempt = 0; attempt < 4; attempt++) {
        expectInvalidClient(await from(`2001:db8:1:2::${attempt + 1}`, machine.id, 'guess'));
      }
      expectThrottled(await from('2001:db8:1:2:ffff::9', machine.id, machine.secret));
      expect((await from('2001:db8:1:3::1', machine.id, machine.secret)).statusCode).to.equal(200);
    });
  });

  describe('two instances on one database', () => {
    let a: TestService;
    let b: TestService;
    before(async function () {
      this.timeout(180_000);
      const dbUrl = await freshDatabaseUrl();
      const env = {
        ENDPOINT: 'http://identity.test',
        CLIENT_AUTH_FAILURE_WINDOW: '60',
        CLIENT_AUTH_FAILURES_PER_CLIENT: '4',
      };
      [a, b] = await Promise.all([startService({ dbUrl, env }), startService({ dbUrl, env })]);
    });
    after(() => Promise.all([ifSet(a)?.stop(), ifSet(b)?.stop()]));

    it('share the count: failures split across both reach the limit, and both refuse', async () => {
      const machine = await createApplication(a, 'MachineToMachine');
      const at = (service: TestService, secret: string) =>
        service.token(machine.id, secret, { grant_type: 'client_credentials' });
      expect((await at(b, machine.secret)).statusCode).to.equal(200);
      expectInvalidClient(await at(a, 'wrong-secret'));
      expectInvalidClient(await at(b, 'wrong-secret'));
      expectInvalidClient(await at(a, 'wrong-secret'));
      expectInvalidClient(await at(b, 'wrong-secret'));
      expectThrottled(await at(a, machine.secret));
      expectThrottled(await at(b, machine.secret));
    });

    it('hold the limit against a burst of concurrent wrong secrets', async () => {
      const machine = await createApplication(a, 'MachineToMachine');
      const answers = await Promise.all(
        Array.from({ length: 12 }, (_, index) =>
          (index % 2 ? a : b).token(machine.id, 'wrong-secret', { grant_type: 'client_credentials' }),
        ),
      );
      const statuses = answers.map((answer) => answer.statusCode);
      expect(
        statuses.every((status) => status === 401 || status === 429),
        statuses.join(', '),
      ).to.equal(true);
      expectThrottled(await a.token(machine.id, machine.secret, { grant_type: 'client_credentials' }));
      expectThrottled(await b.token(machine.id, machine.secret, { grant_type: 'client_credentials' }));
    });
  });
});
