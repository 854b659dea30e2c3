import { expect } from 'chai';

import { eventually } from '../support/eventually.ts';
import { startService, type TestService } from '../support/service.ts';
import { ifSet, unique } from '../support/values.ts';
import { Receiver } from './receiver.ts';

/** Every failed delivery attempt is a log line an operator can act on: ids, what came back, never the payload or the URL's secrets. */
describe('webhooks: failed delivery attempts in the log', () => {
  let service: TestService;
  let receiver: Receiver;
  before(async () => {
    service = await startService({ logs: true, env: { HOOKS_RETRY_SCHEDULE: '0.2' } });
    receiver = await Receiver.start();
  });
  after(async () => {
    await ifSet(receiver)?.close();
    await ifSet(service)?.stop();
  });

  it('logs each failed attempt at warn (one to be retried, then the last), with ids and the target host only', async () => {
    receiver.answer = () => ({ status: 500, body: 'receiver-body-not-for-the-log' });
    const url = `http://127.0.0.1:${receiver.port}/path-token-0123/hook?key=query-secret-4567`;
    const hook = await service.api.post('hooks', {
      json: { name: 'failing', events: ['User.Created'], config: { url } },
    });
    expect(hook.statusCode).to.equal(201);
    const username = unique('payload');
    expect((await service.api.post('users', { json: { username } })).statusCode).to.equal(200);
    await receiver.waitFor(2);

    const lines = await eventually(
      () => {
        const ofHook = service
          .logs()
          .split('\n')
          .filter((line) => line.includes(hook.body.id))
          .map((line) => JSON.parse(line) as Record<string, unknown>);
        return ofHook.length >= 2 && ofHook;
      },
      5000,
      'two log lines of the hook',
    );
    const [retry, last] = lines;
    expect(lines).to.have.length(2);
    const fields = {
      level: 40,
      hookId: hook.body.id,
      event: 'User.Created',
      host: `127.0.0.1:${receiver.port}`,
      statusCode: 500,
    };
    expect(retry).to.include({ ...fields, attempt: 1, msg: 'webhook delivery attempt failed: will retry' });
    expect(retry.retryInSeconds).to.be.a('number');
    expect(last).to.include({
      ...fields,
      attempt: 2,
      msg: 'webhook delivery failed: no more retries',
      deliveryId: retry.deliveryId,
    });
    const logs = service.logs();
    for (const secret of ['path-token-0123', 'query-secret-4567', 'receiver-body-not-for-the-log', username]) {
      expect(logs).to.not.include(secret);
    }
  });
});
