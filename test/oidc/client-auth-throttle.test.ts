import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import * as client from 'openid-client';

import { freshDatabaseUrl } from '../support/database.ts';
import { createApplication, createMachineWithScopes, createResource } from '../support/fixtures.ts';
import {
  adminClient,
  type HttpResponse,
  startService,
  type TestService,
  type TokenResponse,
} from '../support/service.ts';
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
  describe('per client id and source address (the defaults: 20 per client and source, 100 per source)', () => {
    let service: TestService;
    let indicator: string;
    let machine: Machine;
    let bystander: Machine;
    before(async () => {
      service = await startService({ env: { TRUST_PROXY: 'true' } });
      const { resource, scopeIds } = await createResource(service, ['read']);
      indicator = resource.indicator;
      machine = (await createMachineWithScopes(service, [scopeIds.read])).application;
      bystander = (await createMachineWithScopes(service, [scopeIds.read])).application;
    });
    after(() => ifSet(service)?.stop());

    /** The client credentials grant from one source address (the proxy's X-Forwarded-For). */
    const from = (address: string, who: Machine, secret = who.secret) =>
      service.http.post('oidc/token', {
        form: { grant_type: 'client_credentials', resource: indicator, scope: 'read' },
        headers: { authorization: basic(who.id, secret), 'x-forwarded-for': address },
      });

    function expectIssued(response: HttpResponse): void {
      expect(response.statusCode, JSON.stringify(response.body)).to.equal(200);
      expect(response.body.access_token).to.be.a('string');
    }

    it('after 20 wrong secrets from one source refuses its guesses with 429; the right secret works from there and elsewhere', async () => {
      for (let attempt = 0; attempt < 20; attempt++) {
        expectInvalidClient(await from('203.0.113.1', machine, `wrong-${attempt}`));
      }
      const retryAfter = expectThrottled(await from('203.0.113.1', machine, 'wrong-again'));
      expect(retryAfter).to.be.at.most(300);
      expectIssued(await from('203.0.113.1', machine));
      expectIssued(await from('198.51.100.1', machine));
      // Another source's wrong guess is its own first failure, and the guessing source's other clients are untouched.
      expectInvalidClient(await from('198.51.100.1', machine, 'wrong'));
      expectInvalidClient(await from('203.0.113.1', bystander, 'wrong'));
      expectIssued(await from('203.0.113.1', bystander));
    });

    it('after 100 wrong secrets from one source refuses its guesses at any client; every right secret still works there', async () => {
      for (let attempt = 0; attempt < 100; attempt++) {
        expectInvalidClient(
          await service.http.post('oidc/token', {
            form: { grant_type: 'client_credentials' },
            headers: { authorization: basic(`guess-${attempt}`, 'guess'), 'x-forwarded-for': '203.0.113.2' },
          }),
        );
      }
      expectThrottled(await from('203.0.113.2', bystander, 'wrong'));
      expectThrottled(await from('203.0.113.2', machine, 'wrong'));
      expectIssued(await from('203.0.113.2', machine));
      expectIssued(await from('203.0.113.2', bystander));
      const admin = await service.http.post('oidc/token', {
        form: { grant_type: 'client_credentials', resource: service.config.managementApiResource, scope: 'all' },
        headers: { authorization: basic(adminClient.id, adminClient.secret), 'x-forwarded-for': '203.0.113.2' },
      });
      expectIssued(admin);
      // A public application authenticates with its id alone: its requests are answered as ever.
      const spa = await createApplication(service, 'SPA', {
        oidcClientMetadata: { redirectUris: ['http://app.test/callback'], postLogoutRedirectUris: [] },
      });
      const refresh = await service.http.post('oidc/token', {
        form: { grant_type: 'refresh_token', refresh_token: 'nope', client_id: spa.id },
        headers: { 'x-forwarded-for': '203.0.113.2' },
      });
      expect(refresh.statusCode, JSON.stringify(refresh.body)).to.equal(400);
      expect(refresh.body.error).to.equal('invalid_grant');
    });

    it('counts secrets posted in the body (client_secret_post) and refuses the wrong ones, not the right one', async () => {
      const posted = (secret: string) =>
        service.http.post('oidc/token', {
          form: {
            grant_type: 'client_credentials',
            client_id: bystander.id,
            client_secret: secret,
            resource: indicator,
            scope: 'read',
          },
          headers: { 'x-forwarded-for': '203.0.113.3' },
        });
      for (let attempt = 0; attempt < 20; attempt++) {
        expectInvalidClient(await posted('wrong-secret'));
      }
      expectThrottled(await posted('wrong-secret'));
      expectThrottled(await from('203.0.113.3', bystander, 'wrong-secret'));
      expectIssued(await posted(bystander.secret));
    });

    it('throttles revocation and introspection, which authenticate clients too', async () => {
      const { application } = await createMachineWithScopes(service, []);
      const at = (path: string, secret: string) =>
        service.http.post(path, {
          form: { token: 'some-token' },
          headers: { authorization: basic(application.id, secret), 'x-forwarded-for': '203.0.113.4' },
        });
      for (let attempt = 0; attempt < 20; attempt++) {
        expectInvalidClient(await at(attempt % 2 ? 'oidc/token/revocation' : 'oidc/token/introspection', 'wrong'));
      }
      expectThrottled(await at('oidc/token/introspection', 'wrong'));
      expectThrottled(await at('oidc/token/revocation', 'wrong'));
      expect((await at('oidc/token/introspection', application.secret)).statusCode).to.equal(200);
      expect((await at('oidc/token/revocation', application.secret)).statusCode).to.equal(200);
    });

    it('lets an admin unlock an application at once (sentinel-activities/delete, targetType App)', async () => {
      const { application } = await createMachineWithScopes(service, []);
      const request = (secret: string) =>
        service.http.post('oidc/token', {
          form: { grant_type: 'client_credentials' },
          headers: { authorization: basic(application.id, secret), 'x-forwarded-for': '203.0.113.5' },
        });
      for (let attempt = 0; attempt < 20; attempt++) {
        expectInvalidClient(await request('wrong-secret'));
      }
      expectThrottled(await request('wrong-secret'));
      const unlocked = await service.api.post('sentinel-activities/delete', {
        json: { targetType: 'App', targets: [application.id] },
      });
      expect(unlocked.statusCode, JSON.stringify(unlocked.body)).to.equal(204);
      expectInvalidClient(await request('wrong-secret'));
    });

    it('limits client ids that do not exist the same way', async () => {
      const guess = () =>
        service.http.post('oidc/token', {
          form: { grant_type: 'client_credentials' },
          headers: { authorization: basic('no-such-client', 'guess'), 'x-forwarded-for': '203.0.113.6' },
        });
      for (let attempt = 0; attempt < 20; attempt++) {
        expectInvalidClient(await guess());
      }
      expectThrottled(await guess());
    });

    it('reaches openid-client as an OAuth error with the status', async () => {
      const { application } = await createMachineWithScopes(service, []);
      for (let attempt = 0; attempt < 20; attempt++) {
        expectInvalidClient(await service.token(application.id, 'wrong-secret', { grant_type: 'client_credentials' }));
      }
      const config = await client.discovery(new URL(`${service.url}/oidc`), application.id, 'wrong-secret', undefined, {
        // eslint-disable-next-line @typescript-eslint/no-deprecated -- deprecated only to stand out: the test service is plain http on 127.0.0.1
        execute: [client.allowInsecureRequests],
      });
      const error = await client.clientCredentialsGrant(config, {}).then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
      expect(error).to.be.instanceOf(client.ResponseBodyError);
      expect(error).to.include({ error: 'too_many_attempts', status: 429 });
    });

    it("does not count requests that fail for other reasons than the client's credentials", async () => {
      const { application } = await createMachineWithScopes(service, []);
      const request = (secret: string, form: Record<string, string> = {}) =>
        service.http.post('oidc/token', {
          form: { grant_type: 'client_credentials', ...form },
          headers: { authorization: basic(application.id, secret), 'x-forwarded-for': '203.0.113.7' },
        });
      for (let attempt = 0; attempt < 25; attempt++) {
        expect((await request(application.secret, { resource: 'https://unknown.example.com' })).statusCode).to.equal(
          400,
        );
      }
      expectInvalidClient(await request('wrong-secret'));
    });

    it('counts the address the proxy saw (the last X-Forwarded-For entry), not ones the client made up', async () => {
      for (let attempt = 0; attempt < 20; attempt++) {
        expectInvalidClient(await from(`10.0.0.${attempt + 1}, 203.0.113.50`, machine, 'guess'));
      }
      expectThrottled(await from('10.0.0.99, 203.0.113.50', machine, 'guess'));
    });

    it('answers an overlong client id or a forwarded address that is not one with 401, never 5xx', async () => {
      expectInvalidClient(await from('203.0.113.80', { id: 'x'.repeat(5000), secret: 'guess' }));
      expectInvalidClient(await from(`not-an-address-${'y'.repeat(400)}`, { id: 'some-client', secret: 'guess' }));
    });

    it('counts an IPv6 /64 as one address', async () => {
      for (let attempt = 0; attempt < 20; attempt++) {
        expectInvalidClient(await from(`2001:db8:1:2::${attempt + 1}`, machine, 'guess'));
      }
      expectThrottled(await from('2001:db8:1:2:ffff::9', machine, 'guess'));
      expectIssued(await from('2001:db8:1:2:ffff::9', machine));
      expectInvalidClient(await from('2001:db8:1:3::1', machine, 'guess'));
    });
  });

  describe('the window', () => {
    let service: TestService;
    before(async () => {
      service = await startService({ env: { CLIENT_AUTH_FAILURE_WINDOW: '2', CLIENT_AUTH_FAILURES_PER_CLIENT: '3' } });
    });
    after(() => ifSet(service)?.stop());

    it("ends the source's refusal after the window", async () => {
      const { application } = await createMachineWithScopes(service, []);
      const request = (secret: string) => service.token(application.id, secret, { grant_type: 'client_credentials' });
      for (let attempt = 0; attempt < 3; attempt++) {
        expectInvalidClient(await request('wrong-secret'));
      }
      const retryAfter = expectThrottled(await request('wrong-secret'));
      expect(retryAfter).to.be.at.most(2);
      await sleep(retryAfter * 1000 + 100);
      expectInvalidClient(await request('wrong-secret'));
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

    it('share the count: failures split across both reach the limit, both refuse guesses, both take the right secret', async () => {
      const machine = await createApplication(a, 'MachineToMachine');
      const at = (service: TestService, secret: string) =>
        service.token(machine.id, secret, { grant_type: 'client_credentials' });
      expect((await at(b, machine.secret)).statusCode).to.equal(200);
      expectInvalidClient(await at(a, 'wrong-secret'));
      expectInvalidClient(await at(b, 'wrong-secret'));
      expectInvalidClient(await at(a, 'wrong-secret'));
      expectInvalidClient(await at(b, 'wrong-secret'));
      expectThrottled(await at(a, 'wrong-secret'));
      expectThrottled(await at(b, 'wrong-secret'));
      expect((await at(a, machine.secret)).statusCode).to.equal(200);
      expect((await at(b, machine.secret)).statusCode).to.equal(200);
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
      expect(statuses.filter((status) => status === 401)).to.have.length.at.most(4);
      expectThrottled(await a.token(machine.id, 'wrong-secret', { grant_type: 'client_credentials' }));
      expectThrottled(await b.token(machine.id, 'wrong-secret', { grant_type: 'client_credentials' }));
      expect((await a.token(machine.id, machine.secret, { grant_type: 'client_credentials' })).statusCode).to.equal(
        200,
      );
    });
  });
});
