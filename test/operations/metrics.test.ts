import { expect } from 'chai';

import { createUser, openExperience, passwordVerification } from '../experience/experience-helpers.ts';
import { Receiver } from '../hooks/receiver.ts';
import { eventually } from '../support/eventually.ts';
import { expectError, expectStatus } from '../support/expect.ts';
import { createApplication } from '../support/fixtures.ts';
import { type Scrape, scrape } from '../support/metrics.ts';
import { startService, type TestService } from '../support/service.ts';
import { ifSet, unique } from '../support/values.ts';
import { delegationSetup, exchange, expectIssued, tokenExchange, userAccessToken } from '../token-exchange/support.ts';

/** Scrapes until `check` holds (what is counted after a response, such as a delivery's attempt, lands a moment later). */
function scrapeUntil(service: TestService, check: (metrics: Scrape) => boolean): Promise<Scrape> {
  return eventually(
    async () => {
      const metrics = await scrape(service);
      return check(metrics) && metrics;
    },
    20_000,
    'the metrics to count it',
  );
}

describe('GET /metrics (Prometheus)', () => {
  let service: TestService;
  before(async () => {
    // A retry an hour away: the failed delivery below stays one attempt however slow the scrapes are.
    service = await startService({ env: { HOOKS_RETRY_SCHEDULE: '3600' } });
  });
  after(() => ifSet(service)?.stop());

  it('parses as Prometheus text: process, HTTP, token, sign-in, webhook, outbox and pool metrics', async () => {
    await service.http.get('health/ready');
    const metrics = await scrape(service);
    for (const [name, type] of [
      ['process_cpu_seconds_total', 'COUNTER'],
      ['nodejs_eventloop_lag_seconds', 'GAUGE'],
      ['identity_http_request_duration_seconds', 'HISTOGRAM'],
      ['identity_token_requests_total', 'COUNTER'],
      ['identity_sign_ins_total', 'COUNTER'],
      ['identity_verification_failures_total', 'COUNTER'],
      ['identity_lockouts_total', 'COUNTER'],
      ['identity_webhook_attempt_duration_seconds', 'HISTOGRAM'],
      ['identity_webhook_outbox_deliveries', 'GAUGE'],
      ['identity_db_pool_connections', 'GAUGE'],
    ] as const) {
      expect(metrics.family(name).type, name).to.equal(type);
    }
    expect(
      metrics.value('identity_http_request_duration_seconds', { method: 'GET', route: '/health/ready', status: '200' }),
    ).to.be.at.least(1);
    expect(metrics.samples('identity_webhook_outbox_deliveries').map((sample) => sample.labels?.state)).to.have.members(
      ['due', 'scheduled', 'delivering'],
    );
    expect(metrics.value('identity_db_pool_connections', { state: 'max' })).to.be.at.least(1);
  });

  it('counts a token exchange, a refused one, and the sign-in before them', async () => {
    const setup = await delegationSetup(service);
    const before = await scrape(service);
    const subjectToken = await userAccessToken(service, setup.frontend.id, setup.user, setup.apiA.resource.indicator);
    const form = {
      subject_token: subjectToken,
      subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
      resource: setup.apiB.resource.indicator,
      scope: 'read:b',
    };
    expectIssued(await exchange(service, setup.backend, form));
    expect(
      (await exchange(service, setup.backend, { ...form, resource: 'https://unknown.example.com' })).statusCode,
    ).to.equal(400);

    const after = await scrape(service);
    const delta = (name: string, labels: Record<string, string>) =>
      after.value(name, labels) - before.value(name, labels);
    expect(delta('identity_token_requests_total', { grant_type: tokenExchange, result: 'success' })).to.equal(1);
    expect(delta('identity_token_requests_total', { grant_type: tokenExchange, result: 'invalid_target' })).to.equal(1);
    expect(delta('identity_token_requests_total', { grant_type: 'authorization_code', result: 'success' })).to.equal(1);
    expect(delta('identity_sign_ins_total', { event: 'SignIn' })).to.equal(1);
    expect(
      delta('identity_http_request_duration_seconds', { method: 'POST', route: '/oidc/token', status: '200' }),
    ).to.equal(2);
    expect(
      delta('identity_http_request_duration_seconds', { method: 'POST', route: '/oidc/token', status: '400' }),
    ).to.equal(1);
  });

  it('counts a grant type a client made up as `other`, never as what it sent', async () => {
    const application = await createApplication(service, 'MachineToMachine');
    const grantType = `urn:made-up:${Date.now()}`;
    expect((await service.token(application.id, application.secret, { grant_type: grantType })).statusCode).to.equal(
      400,
    );
    const metrics = await scrape(service);
    expect(
      metrics.value('identity_token_requests_total', { grant_type: 'other', result: 'unsupported_grant_type' }),
    ).to.be.at.least(1);
    expect(JSON.stringify(metrics.samples('identity_token_requests_total'))).to.not.include(grantType);
  });

  it('counts a webhook delivery just made, by result', async () => {
    const receiver = await Receiver.start();
    try {
      const hook = await service.api.post('hooks', {
        json: { name: 'metrics', events: ['User.Created'], config: { url: receiver.url } },
      });
      expect(hook.statusCode).to.equal(201);
      const before = await scrape(service);
      const succeeded = () => before.value('identity_webhook_attempt_duration_seconds', { result: 'succeeded' });
      await createUser(service, { username: unique('counted') });
      await receiver.waitFor(1);
      const after = await scrapeUntil(
        service,
        (metrics) => metrics.value('identity_webhook_attempt_duration_seconds', { result: 'succeeded' }) > succeeded(),
      );
      expect(after.value('identity_webhook_attempt_duration_seconds', { result: 'succeeded' }) - succeeded()).to.equal(
        1,
      );

      // The receiver fails: an attempt to retry, and the delivery waits in the outbox for its retry.
      receiver.answer = () => ({ status: 503 });
      await createUser(service, { username: unique('retried') });
      await receiver.waitFor(2);
      const retried = await scrapeUntil(
        service,
        (metrics) => metrics.value('identity_webhook_outbox_deliveries', { state: 'scheduled' }) === 1,
      );
      expect(
        retried.value('identity_webhook_attempt_duration_seconds', { result: 'retry' }) -
          before.value('identity_webhook_attempt_duration_seconds', { result: 'retry' }),
      ).to.equal(1);
      expect(retried.value('identity_webhook_outbox_deliveries', { state: 'scheduled' })).to.equal(1);
      await service.api.delete(`hooks/${hook.body.id}`);
    } finally {
      await receiver.close();
    }
  });

  it('counts failed verifications and a lockout', async () => {
    expectStatus(
      await service.api.patch('sign-in-exp', { json: { sentinelPolicy: { maxAttempts: 2, lockoutDuration: 1 } } }),
      200,
    );
    const app = await createApplication(service, 'SPA', {
      oidcClientMetadata: { redirectUris: ['http://app.test/callback'], postLogoutRedirectUris: [] },
    });
    const username = unique('locked');
    await createUser(service, { username, password: 'Granite-Kestrel-64' });
    const browser = await openExperience(service, app.id);
    const before = await scrape(service);
    const identifier = { type: 'username' as const, value: username };
    expectError(
      await passwordVerification(browser, identifier, 'Not-The-Password-1'),
      422,
      'session.invalid_credentials',
    );
    expectError(
      await passwordVerification(browser, identifier, 'Not-The-Password-1'),
      400,
      'session.verification_blocked_too_many_attempts',
    );
    const after = await scrape(service);
    expect(
      after.value('identity_verification_failures_total') - before.value('identity_verification_failures_total'),
    ).to.equal(2);
    expect(after.value('identity_lockouts_total') - before.value('identity_lockouts_total')).to.equal(1);
  });

  it('labels requests by route pattern, never by the raw path', async () => {
    const application = await createApplication(service, 'MachineToMachine');
    expect((await service.api.get(`applications/${application.id}`)).statusCode).to.equal(200);
    const unknown = `no-such-page-${Date.now()}`;
    expect((await service.http.get(unknown, { responseType: 'text' })).statusCode).to.equal(404);
    expect((await service.http.get(`api/${unknown}`)).statusCode).to.equal(401);
    const metrics = await scrape(service);
    expect(
      metrics.value('identity_http_request_duration_seconds', {
        method: 'GET',
        route: '/api/applications/:id',
        status: '200',
      }),
    ).to.be.at.least(1);
    expect(
      metrics.value('identity_http_request_duration_seconds', { method: 'GET', route: 'other', status: '404' }),
    ).to.be.at.least(1);
    expect(
      metrics.value('identity_http_request_duration_seconds', { method: 'GET', route: '/api/*', status: '401' }),
    ).to.be.at.least(1);
    const labels = JSON.stringify(
      metrics.samples('identity_http_request_duration_seconds').map((sample) => sample.labels),
    );
    expect(labels).to.not.include(application.id);
    expect(labels).to.not.include(unknown);
  });
});

describe('GET /metrics: who may read it', () => {
  it('with METRICS_TOKEN, answers only `Authorization: Bearer <token>` (401 otherwise, in any environment)', async () => {
    const token = 'metrics-token-0123456789abcdef';
    const service = await startService({ env: { METRICS_TOKEN: token } });
    try {
      const attempts: Array<Record<string, string>> = [
        {},
        { authorization: 'Bearer not-the-metrics-token-000' },
        { authorization: `Basic ${token}` },
      ];
      for (const headers of attempts) {
        const refused = await service.http.get('metrics', { headers });
        expect(refused.statusCode, JSON.stringify(headers)).to.equal(401);
        expect(refused.headers['www-authenticate']).to.equal('Bearer realm="metrics"');
        expect(refused.body.code).to.match(/^auth\./);
      }
      await scrape(service, { authorization: `Bearer ${token}` });
    } finally {
      await service.stop();
    }
  });

  it('is off in production without METRICS_TOKEN (404)', async () => {
    const service = await startService({ env: { NODE_ENV: 'production' } });
    try {
      expect((await service.http.get('metrics', { responseType: 'text' })).statusCode).to.equal(404);
      expect((await service.http.get('health/ready')).statusCode).to.equal(200);
    } finally {
      await service.stop();
    }
  });

  it('refuses a METRICS_TOKEN too short to be safe, naming the variable', async () => {
    let refused: unknown;
    try {
      await startService({ env: { METRICS_TOKEN: 'short' } });
    } catch (error) {
      refused = error;
    }
    expect(String(refused)).to.match(/METRICS_TOKEN: must be 16 to 256/);
  });
});
