import { expect } from 'chai';

import { failedTooLong, failingSinceAfter } from '../../lib/hooks/delivery/endpoint-health.ts';
import { eventually } from '../support/eventually.ts';
import { Receiver } from './receiver.ts';
import { createHook, deliveryRows, type HooksService, startHooksService } from './support.ts';

describe('hooks: endpoint health (auto-disable)', () => {
  let service: HooksService;
  let receiver: Receiver;

  before(async () => {
    service = await startHooksService({
      env: { HOOKS_DISABLE_AFTER: '2', HOOKS_RETRY_SCHEDULE: Array(40).fill('0.2').join(',') },
    });
  });
  beforeEach(async () => {
    receiver = await Receiver.start();
  });
  afterEach(async () => {
    await receiver.close();
  });
  after(async () => {
    await service.stop();
  });

  const getHook = async (id: string) => (await service.api.get(`hooks/${id}`)).body;

  it('disables a hook whose every attempt failed for HOOKS_DISABLE_AFTER seconds, with a reason, an audit entry and an email', async () => {
    receiver.answer = () => ({ status: 503 });
    const hook = await createHook(service, receiver.url, ['User.Created'], { notifyEmail: 'ops@example.com' });
    expect((await getHook(hook.id)).notifyEmail).to.equal('ops@example.com');
    await service.emit('User.Created', { data: { id: 'u1' } });

    const disabled = await eventually(
      async () => {
        const current = await getHook(hook.id);
        return current.enabled === false && current;
      },
      20_000,
      'hook disabled',
    );
    expect(disabled.disabledReason).to.equal('Every delivery attempt failed for 2 seconds.');
    // It failed for at least the window: its attempts span 2 s.
    const times = receiver.requests.map((request) => request.receivedAt);
    expect(Math.max(...times) - Math.min(...times)).to.be.at.least(1500);

    const audit = await eventually(
      async () => {
        const logs = await service.api.get('logs', { searchParams: { logKey: 'Hook.Disabled', targetId: hook.id } });
        return logs.body.length > 0 && logs.body;
      },
      15_000,
      'the Hook.Disabled audit entry',
    );
    expect(audit[0].payload).to.deep.include({ key: 'Hook.Disabled', result: 'Success' });
    expect(audit[0].payload.params).to.deep.equal({ hookId: hook.id, reason: disabled.disabledReason });
    // The URL (its path or query may hold a token) is in no notice.
    expect(JSON.stringify(audit)).not.to.include(receiver.url);

    const emails = await eventually(
      async () => {
        const messages = await service.api.get('verification-messages', {
          searchParams: { recipient: 'ops@example.com' },
        });
        return messages.body.length > 0 && messages.body;
      },
      15_000,
      'the notice email',
    );
    expect(emails[0]).to.include({ purpose: 'HookDisabled', type: 'email' });

    // What it had pending is failed unsent; new events are not queued for it.
    await eventually(
      async () => (await deliveryRows(service, hook.id)).every((row) => row.status === 'failed'),
      5000,
      'pending deliveries failed',
    );
    await service.emit('User.Created', { data: { id: 'u2' } });
    expect(await deliveryRows(service, hook.id)).to.have.length(1);
  });

  it('re-enabling clears the reason and the run of failures', async () => {
    receiver.answer = () => ({ status: 500 });
    const hook = await createHook(service, receiver.url, ['Role.Created']);
    await service.emit('Role.Created', { data: { id: 'r1' } });
    await eventually(async () => (await getHook(hook.id)).enabled === false, 20_000, 'hook disabled');

    const enabled = await service.api.patch(`hooks/${hook.id}`, { json: { enabled: true } });
    expect(enabled.statusCode).to.equal(200);
    expect(enabled.body).to.include({ enabled: true, disabledReason: null });
    const state = await service.db('hook_dispatch').where({ hook_id: hook.id }).first();
    expect(state.failing_since).to.equal(null);

    receiver.answer = () => ({ status: 200 });
    const before = receiver.requests.length;
    await service.emit('Role.Created', { data: { id: 'r2' } });
    await receiver.waitFor(before + 1);
    expect((await getHook(hook.id)).enabled).to.equal(true);
  });

  it('names 410 Gone as the reason a hook was disabled', async () => {
    receiver.answer = () => ({ status: 410 });
    const hook = await createHook(service, receiver.url, ['Role.Deleted']);
    await service.emit('Role.Deleted', { data: { id: 'r1' } });
    const disabled = await eventually(
      async () => {
        const current = await getHook(hook.id);
        return current.enabled === false && current;
      },
      15_000,
      'the hook disabled',
    );
    expect(disabled.disabledReason).to.equal('The endpoint answered 410 Gone.');
  });

  it('keeps the reason empty for a hook disabled by hand, and validates the new fields', async () => {
    const hook = await createHook(service, receiver.url, ['Role.Deleted']);
    const patched = await service.api.patch(`hooks/${hook.id}`, {
      json: { enabled: false, ordering: 'per-entity', rateLimitPerSecond: 5, notifyEmail: 'a@example.com' },
    });
    expect(patched.body).to.include({
      enabled: false,
      disabledReason: null,
      ordering: 'per-entity',
      rateLimitPerSecond: 5,
      notifyEmail: 'a@example.com',
    });
    const cleared = await service.api.patch(`hooks/${hook.id}`, {
      json: { rateLimitPerSecond: null, notifyEmail: null },
    });
    expect(cleared.body).to.include({ rateLimitPerSecond: null, notifyEmail: null, ordering: 'per-entity' });
    for (const json of [
      { ordering: 'total' },
      { rateLimitPerSecond: 0 },
      { rateLimitPerSecond: 1.5 },
      { notifyEmail: 'nope' },
    ]) {
      const refused = await service.api.patch(`hooks/${hook.id}`, { json });
      expect(refused.statusCode, JSON.stringify(json)).to.equal(400);
      expect(refused.body.code).to.be.a('string');
    }
  });
});

describe('hooks: endpoint health, the run of failures', () => {
  it('starts at the first failure after a success and ends at a success', () => {
    expect(
      failingSinceAfter(null, [
        { at: 5, succeeded: false },
        { at: 3, succeeded: false },
      ]),
    ).to.equal(3);
    expect(failingSinceAfter(1, [{ at: 5, succeeded: false }])).to.equal(1);
    expect(failingSinceAfter(1, [{ at: 5, succeeded: true }])).to.equal(null);
    expect(
      failingSinceAfter(1, [
        { at: 6, succeeded: false },
        { at: 5, succeeded: true },
      ]),
    ).to.equal(6);
    expect(failedTooLong(null, 10_000, 1)).to.equal(false);
    expect(failedTooLong(1000, 2999, 2)).to.equal(false);
    expect(failedTooLong(1000, 3000, 2)).to.equal(true);
  });
});
