import { expect } from 'chai';

import { Receiver } from '../hooks/receiver.ts';
import { eventually } from '../support/eventually.ts';
import { startService, type TestService } from '../support/service.ts';
import { ifSet } from '../support/values.ts';
import {
  accessTokenType,
  delegationSetup,
  exchange,
  expectIssued,
  expectOAuthError,
  userAccessToken,
} from '../token-exchange/support.ts';

type Day = {
  day: number;
  signIns: number;
  registrations: number;
  tokenExchanges: { success: number; failure: number };
  webhookDeliveries: { success: number; failure: number };
};

describe('GET /api/dashboard', () => {
  let service: TestService;
  let receiver: Receiver;

  before(async () => {
    service = await startService({ env: { HOOKS_RETRY_SCHEDULE: '0.2,0.2' } });
    receiver = await Receiver.start();
  });

  after(async () => {
    await ifSet(receiver)?.close();
    await ifSet(service)?.stop();
  });

  const month = async () => {
    const response = await service.api.get('dashboard', { searchParams: { days: 30 } });
    expect(response.statusCode).to.equal(200);
    return response.body as { days: Day[]; webhookLatencyP50Ms: number | null };
  };

  it('counts per UTC day over 7 or 30 days, today last: what was done today, nothing before', async () => {
    const empty = await month();
    expect(empty.days).to.have.length(30);
    for (const day of empty.days) {
      expect(day).to.deep.include({
        registrations: 0,
        signIns: 0,
        tokenExchanges: { success: 0, failure: 0 },
        webhookDeliveries: { success: 0, failure: 0 },
      });
    }
    expect(empty.webhookLatencyP50Ms).to.equal(null);

    // Each registration is delivered to a hook that refuses its first request: one failed attempt, then successes.
    receiver.answer = (_request, index) => (index === 0 ? { status: 500 } : { status: 200 });
    const hook = await service.api.post('hooks', {
      json: { name: 'registrations', events: ['User.Created'], config: { url: receiver.url } },
    });
    expect(hook.statusCode).to.equal(201);
    // Three registrations (two here, one in the delegation setting), one sign-in, two token exchanges.
    for (const username of ['dash_a', 'dash_b']) {
      expect((await service.api.post('users', { json: { username } })).statusCode).to.equal(200);
    }
    const setting = await delegationSetup(service);
    const subjectToken = await userAccessToken(
      service,
      setting.frontend.id,
      setting.user,
      setting.apiA.resource.indicator,
    );
    const resource = setting.apiB.resource.indicator;
    expectIssued(
      await exchange(service, setting.backend, {
        subject_token: subjectToken,
        subject_token_type: accessTokenType,
        resource,
      }),
    );
    expectOAuthError(
      await exchange(service, setting.backend, {
        subject_token: 'not-a-token',
        subject_token_type: accessTokenType,
        resource,
      }),
      400,
      'invalid_request',
    );

    // Deliveries and audit entries are written after the responses: wait until all of them show.
    const counted = await eventually(
      async () => {
        const read = await month();
        const { signIns, tokenExchanges, webhookDeliveries } = read.days.at(-1)!;
        const settled =
          signIns > 0 &&
          tokenExchanges.success + tokenExchanges.failure >= 2 &&
          webhookDeliveries.success + webhookDeliveries.failure >= 4;
        return settled && read;
      },
      15_000,
      "the day's sign-ins, exchanges and deliveries counted",
    );
    expect(counted.days).to.have.length(30);
    expect(counted.days.at(-1)).to.deep.equal({
      day: Date.now() - (Date.now() % 86_400_000),
      registrations: 3,
      signIns: 1,
      tokenExchanges: { success: 1, failure: 1 },
      webhookDeliveries: { success: 3, failure: 1 },
    });
    expect(counted.days.slice(0, -1)).to.deep.equal(empty.days.slice(0, -1));
    expect(counted.webhookLatencyP50Ms).to.be.a('number').and.at.least(0);

    expect((await service.api.get('dashboard')).body.days).to.have.length(7);
    expect((await service.api.get('dashboard', { searchParams: { days: 5 } })).statusCode).to.equal(400);
    expect((await service.http.get('api/dashboard')).statusCode).to.equal(401);
  });
});
