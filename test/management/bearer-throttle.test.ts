import { expect } from 'chai';

import { freshDatabaseUrl } from '../support/database.ts';
import { adminClient, type HttpResponse, startService, type TestService } from '../support/service.ts';
import { ifSet } from '../support/values.ts';

/** A management API token of the bootstrap administrator application. */
async function managementToken(service: TestService): Promise<string> {
  const response = await service.token(adminClient.id, adminClient.secret, {
    grant_type: 'client_credentials',
    resource: service.config.managementApiResource,
    scope: 'all',
  });
  expect(response.statusCode, JSON.stringify(response.body)).to.equal(200);
  return String(response.body.access_token);
}

/** GET /api/applications with this bearer token, from this source address (the proxy's X-Forwarded-For). */
const listFrom = (service: TestService, address: string, token: string) =>
  service.http.get('api/applications', {
    headers: { authorization: `Bearer ${token}`, 'x-forwarded-for': address },
  });

function expectThrottled(response: HttpResponse): void {
  expect(response.statusCode, JSON.stringify(response.body)).to.equal(429);
  expect(response.body).to.have.property('code', 'auth.too_many_attempts');
  const retryAfter = Number(response.headers['retry-after']);
  expect(Number.isInteger(retryAfter), `Retry-After: ${String(response.headers['retry-after'])}`).to.equal(true);
  expect(retryAfter).to.be.greaterThan(0);
}

function expectUnauthorized(response: HttpResponse): void {
  expect(response.statusCode, JSON.stringify(response.body)).to.equal(401);
}

describe('management API: a flood of bad bearer tokens', () => {
  describe('one instance (the default: 100 failures per source in 300 s)', () => {
    let service: TestService;
    let token: string;
    before(async () => {
      service = await startService({ env: { TRUST_PROXY: 'true' } });
      token = await managementToken(service);
    });
    after(() => ifSet(service)?.stop());

    it('answers the flooding source 429 with Retry-After; valid tokens, from there or elsewhere, still work', async () => {
      for (let attempt = 0; attempt < 100; attempt++) {
        expectUnauthorized(await listFrom(service, '203.0.113.9', `not-a-token-${attempt}`));
      }
      expectThrottled(await listFrom(service, '203.0.113.9', 'not-a-token'));
      // A forged JWT and a missing header are bad credentials too.
      expectThrottled(await listFrom(service, '203.0.113.9', `${token.slice(0, -4)}AAAA`));
      expectThrottled(await service.http.get('api/applications', { headers: { 'x-forwarded-for': '203.0.113.9' } }));
      expect((await listFrom(service, '198.51.100.9', token)).statusCode).to.equal(200);
      expect((await listFrom(service, '203.0.113.9', token)).statusCode).to.equal(200);
      expectUnauthorized(await listFrom(service, '198.51.100.9', 'not-a-token'));
    });
  });

  describe('two instances on one database', () => {
    let a: TestService;
    let b: TestService;
    before(async function () {
      this.timeout(180_000);
      const dbUrl = await freshDatabaseUrl();
      const env = { ENDPOINT: 'http://identity.test', CLIENT_AUTH_FAILURES_PER_ADDRESS: '6' };
      [a, b] = await Promise.all([startService({ dbUrl, env }), startService({ dbUrl, env })]);
    });
    after(() => Promise.all([ifSet(a)?.stop(), ifSet(b)?.stop()]));

    it('share the count: failures split across both reach the limit, and both refuse', async () => {
      const bad = (service: TestService) =>
        service.http.get('api/applications', { headers: { authorization: 'Bearer not-a-token' } });
      for (let attempt = 0; attempt < 6; attempt++) {
        expectUnauthorized(await bad(attempt % 2 ? a : b));
      }
      expectThrottled(await bad(a));
      expectThrottled(await bad(b));
      expect((await a.api.get('applications')).statusCode).to.equal(200);
      expect((await b.api.get('applications')).statusCode).to.equal(200);
    });
  });
});
