import { expect } from 'chai';

import { Receiver } from '../hooks/receiver.ts';
import { startBuiltService, useBuild } from '../support/build.ts';
import { removeDatabase, testDatabase } from '../support/database.ts';
import { eventually } from '../support/eventually.ts';
import { scrape } from '../support/metrics.ts';
import type { ServiceClient } from '../support/service.ts';
import { delegationSetup, exchange, expectIssued, tokenExchange, userAccessToken } from '../token-exchange/support.ts';

const metricsToken = 'built-service-metrics-token-0123456789';
const bearer = { authorization: `Bearer ${metricsToken}` };

describe('the built service (node dist/lib/main.js): readiness and metrics as an operator sees them', () => {
  useBuild();
  let service: ServiceClient;
  let receiver: Receiver;
  const started: { stop(): Promise<void> }[] = [];
  before(async function () {
    this.timeout(120_000);
    receiver = await Receiver.start();
    started.push({ stop: () => receiver.close() });
    // Production mode, as deployed; the webhook receiver of this test listens on loopback.
    service = await startBuiltService({ METRICS_TOKEN: metricsToken, HOOKS_ALLOW_PRIVATE_TARGETS: 'true' });
    started.push(service);
  });
  after(async () => {
    for (const each of started.reverse()) {
      await each.stop();
    }
  });

  it('is ready, and /metrics (behind METRICS_TOKEN) counts a token exchange and a webhook delivery just made', async () => {
    const ready = await service.http.get('health/ready');
    expect(ready.statusCode).to.equal(200);
    expect(ready.body).to.deep.equal({ status: 'ok' });
    expect((await service.http.get('metrics', { responseType: 'text' })).statusCode).to.equal(401);

    const hook = await service.api.post('hooks', {
      json: { name: 'built', events: ['User.Created'], config: { url: receiver.url } },
    });
    expect(hook.statusCode).to.equal(201);
    const before = await scrape(service, bearer);

    // delegationSetup creates the user whose User.Created event the receiver gets.
    const setup = await delegationSetup(service);
    const subjectToken = await userAccessToken(service, setup.frontend.id, setup.user, setup.apiA.resource.indicator);
    expectIssued(
      await exchange(service, setup.backend, {
        subject_token: subjectToken,
        subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
        resource: setup.apiB.resource.indicator,
        scope: 'read:b',
      }),
    );
    await receiver.waitFor(1);

    const delivered = (metrics: typeof before) =>
      metrics.value('identity_webhook_attempt_duration_seconds', { result: 'succeeded' });
    // The attempt is counted once the receiver's answer is read, a moment after the receiver has the request.
    const after = await eventually(
      async () => {
        const metrics = await scrape(service, bearer);
        return delivered(metrics) !== delivered(before) && metrics;
      },
      20_000,
      'the attempt counted',
    );
    expect(delivered(after) - delivered(before)).to.equal(1);
    expect(
      after.value('identity_token_requests_total', { grant_type: tokenExchange, result: 'success' }) -
        before.value('identity_token_requests_total', { grant_type: tokenExchange, result: 'success' }),
    ).to.equal(1);
  });

  it(`answers 503 database_unavailable once its database is ${testDatabase === 'sqlite' ? 'removed' : 'dropped'}, and stays live`, async () => {
    await removeDatabase(service.config.dbUrl);
    const ready = await service.http.get('health/ready');
    expect(ready.statusCode, JSON.stringify(ready.body)).to.equal(503);
    expect(ready.body).to.include({ status: 'unavailable', reason: 'database_unavailable' });
    expect((await service.http.get('health/live')).statusCode).to.equal(200);
  });
});
