import { expect } from 'chai';

import { startService, type TestService } from '../support/service.ts';
import { ifSet } from '../support/values.ts';

describe('GET /api/dashboard', () => {
  let service: TestService;

  before(async () => {
    service = await startService();
  });

  after(async () => {
    await ifSet(service)?.stop();
  });

  it('counts per UTC day over 7 or 30 days, today last', async () => {
    for (const username of ['dash_a', 'dash_b']) {
      expect((await service.api.post('users', { json: { username } })).statusCode).to.equal(200);
    }
    const month = await service.api.get('dashboard', { searchParams: { days: 30 } });
    expect(month.statusCode).to.equal(200);
    expect(month.body.days).to.have.length(30);
    const today = month.body.days.at(-1);
    expect(today.day).to.equal(Date.now() - (Date.now() % 86_400_000));
    expect(today).to.deep.include({
      registrations: 2,
      signIns: 0,
      tokenExchanges: { success: 0, failure: 0 },
      webhookDeliveries: { success: 0, failure: 0 },
    });
    expect(month.body.webhookLatencyP50Ms).to.equal(null);

    expect((await service.api.get('dashboard')).body.days).to.have.length(7);
    expect((await service.api.get('dashboard', { searchParams: { days: 5 } })).statusCode).to.equal(400);
    expect((await service.http.get('api/dashboard')).statusCode).to.equal(401);
  });
});
