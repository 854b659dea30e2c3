import { expect } from 'chai';

import { ifSet } from '../support/values.ts';
import { Receiver } from './receiver.ts';
import { createHook, type HooksService, startHooksService } from './support.ts';

/** Events produced by the service's own routes. */
describe('hooks: events from the management API', () => {
  let service: HooksService;
  let receiver: Receiver;

  before(async () => {
    service = await startHooksService({ env: { HOOKS_RETRY_SCHEDULE: '0.2,0.2,0.2' } });
    receiver = await Receiver.start();
  });
  after(async () => {
    await ifSet(receiver)?.close();
    await ifSet(service)?.stop();
  });

  it('POST /api/users delivers User.Created with the user as the API returned it', async () => {
    const hook = await createHook(service, receiver.url, ['User.Created']);
    const created = await service.api.post('users', {
      json: { username: `hook_user_${Date.now()}`, password: 'A-long-passw0rd!' },
    });
    expect(created.statusCode).to.equal(200);
    const [request] = await receiver.waitFor(1);
    const payload = JSON.parse(request.body);
    expect(payload).to.include({
      hookId: hook.id,
      event: 'User.Created',
      path: '/api/users',
      method: 'POST',
      matchedRoute: '/users',
    });
    expect(payload.data).to.deep.equal(created.body);
  });

  it('a failed request emits nothing', async () => {
    const before = receiver.requests.length;
    const response = await service.api.post('users', { json: { username: '1 not valid' } });
    expect(response.statusCode).to.equal(400);
    const rows = await service.db('hook_deliveries').count({ n: '*' });
    expect(Number(rows[0].n)).to.equal(1);
    expect(receiver.requests.length).to.equal(before);
  });
});
