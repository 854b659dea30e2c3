import { expect } from 'chai';

import { loadConfig } from '../../lib/config/env.ts';
import { pruneEventLog } from '../../lib/hooks/event-log.ts';
import { createHook, type HooksService, startHooksService } from './support.ts';

describe('hooks: the event log', () => {
  let service: HooksService;

  before(async () => {
    service = await startHooksService({ env: { HOOKS_EVENT_RETENTION: '3600' } });
  });
  after(async () => {
    await service.stop();
  });

  const logged = () =>
    service
      .db('hook_events')
      .orderBy(['created_at', 'id'])
      .select<Array<{ event: string; payload: string }>>('event', 'payload');

  it('logs nothing while no hook exists, then every event, whoever listens', async () => {
    await service.emit('User.Created', { data: { n: 0 } });
    expect(await logged()).to.deep.equal([]);

    // Disabled and subscribed to another event: the events are logged all the same, for a later replay.
    await createHook(service, 'http://127.0.0.1:9/hook', ['Role.Created'], { enabled: false });
    await service.emit('User.Created', { data: { n: 1 } });
    await service.emit('Role.Deleted', { data: { n: 2 } });
    expect(await logged()).to.deep.equal([
      { event: 'User.Created', payload: JSON.stringify({ data: { n: 1 } }) },
      { event: 'Role.Deleted', payload: JSON.stringify({ data: { n: 2 } }) },
    ]);
    expect(await service.db('hook_deliveries').count({ count: '*' }).first()).to.deep.include({ count: 0 });
  });

  it('prunes events older than the retention, a batch at a time', async () => {
    await service.db('hook_events').delete();
    const now = Date.now();
    const old = Array.from({ length: 5 }, (_, index) => ({
      id: `old${index}`,
      event: 'User.Created',
      payload: '{}',
      created_at: now - 7200_000 - index,
    }));
    await service
      .db('hook_events')
      .insert([...old, { id: 'recent', event: 'User.Created', payload: '{}', created_at: now }]);
    expect(await pruneEventLog(service.db, now - service.config.hooksEventRetentionMs, 2)).to.equal(5);
    expect(await service.db('hook_events').pluck('id')).to.deep.equal(['recent']);
  });

  it('reads HOOKS_EVENT_RETENTION in seconds (default 14 days) and refuses a bad value', () => {
    expect(loadConfig({}).hooksEventRetentionMs).to.equal(14 * 24 * 3600 * 1000);
    expect(service.config.hooksEventRetentionMs).to.equal(3600_000);
    expect(() => loadConfig({ HOOKS_EVENT_RETENTION: 'a week' })).to.throw(/HOOKS_EVENT_RETENTION/);
  });
});
