import { expect } from 'chai';

import { eventually } from '../support/eventually.ts';
import { scrape } from '../support/metrics.ts';
import { startService, type TestService } from '../support/service.ts';
import { Receiver } from './receiver.ts';

describe('hooks: delivery metrics', () => {
  let service: TestService;
  let receiver: Receiver;

  before(async () => {
    service = await startService({ env: { HOOKS_RETRY_SCHEDULE: '0.1' } });
    receiver = await Receiver.start();
  });
  after(async () => {
    await receiver.close();
    await service.stop();
  });

  it('counts attempts by hook and outcome, and the latency from commit to receipt', async () => {
    const created = await service.api.post('hooks', {
      json: { name: 'metrics', events: ['Role.Created'], config: { url: receiver.url } },
    });
    expect(created.statusCode).to.equal(201);
    const hookId = (created.body as { id: string }).id;
    const hook = (outcome: string) => ({ hook_id: hookId, outcome });

    expect((await service.api.post('roles', { json: { name: 'metered', description: 'd' } })).statusCode).to.equal(200);
    const delivered = await eventually(
      async () => {
        const metrics = await scrape(service);
        return metrics.value('identity_webhook_delivery_attempts_total', hook('succeeded')) === 1 && metrics;
      },
      15_000,
      'the succeeded attempt counted',
    );
    expect(delivered.family('identity_webhook_delivery_latency_seconds').type).to.equal('HISTOGRAM');
    expect(delivered.value('identity_webhook_delivery_latency_seconds')).to.be.at.least(1);

    // Refused twice (the first try and its one retry): a retry, then a failure.
    receiver.answer = () => ({ status: 503 });
    await service.api.post('roles', { json: { name: 'metered again', description: 'd' } });
    const failed = await eventually(
      async () => {
        const metrics = await scrape(service);
        return metrics.value('identity_webhook_delivery_attempts_total', hook('failed')) === 1 && metrics;
      },
      15_000,
      'the failed attempt counted',
    );
    expect(failed.value('identity_webhook_delivery_attempts_total', hook('retry'))).to.equal(1);
    expect(failed.value('identity_webhook_delivery_attempts_total', hook('succeeded'))).to.equal(1);
  });
});
