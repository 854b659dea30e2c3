import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import type { Knex } from 'knex';

import type { HookEvent } from '../../lib/hooks/events.ts';
import { enqueueEvent } from '../../lib/hooks/outbox.ts';
import { openDatabase } from '../../lib/storage/database.ts';
import { SharedCache } from '../../lib/storage/shared-cache.ts';
import { freshDatabaseUrl, testDatabase } from '../support/database.ts';
import { eventually } from '../support/eventually.ts';
import { Receiver } from './receiver.ts';
import { createHook, deliveryRows, type HooksService, startHooksService } from './support.ts';

/** The database of a stopped service, opened alone (on SQLite two connections in one process would stall each other). */
async function whileStopped<T>(dbUrl: string, use: (db: Knex) => Promise<T>): Promise<T> {
  const db = openDatabase(dbUrl);
  try {
    return await use(db);
  } finally {
    await db.destroy();
  }
}

const schedule = { HOOKS_RETRY_SCHEDULE: '0.5,0.5,0.5,0.5,0.5,0.5,0.5,0.5,0.5,0.5' };

describe('hooks: durability across restarts', () => {
  it('delivers what was queued before the service stopped, once the next one starts', async () => {
    const dbUrl = await freshDatabaseUrl();
    const receiver = await Receiver.down();
    let first: HooksService | undefined = await startHooksService({ dbUrl, env: schedule });
    let second: HooksService | undefined;
    try {
      const hook = await createHook(first, receiver.url, ['User.Created']);
      for (let index = 0; index < 20; index++) {
        await first.emit('User.Created', { data: { index } });
      }
      await first.stop();
      first = undefined;
      const queued = await whileStopped(
        dbUrl,
        async (db) => (await db('hook_deliveries').where({ hook_id: hook.id }).pluck('id')) as string[],
      );
      expect(queued).to.have.length(20);

      await receiver.listen();
      second = await startHooksService({ dbUrl, env: schedule });
      await receiver.waitFor(20, 20_000);
      await sleep(300);
      expect(receiver.requests).to.have.length(20);
      expect([...receiver.ids].sort()).to.deep.equal([...queued].sort());
      const indexes = receiver.requests
        .map((request) => JSON.parse(request.body).data.index as number)
        .sort((a, b) => a - b);
      expect(indexes).to.deep.equal([...Array(20).keys()]);
    } finally {
      await receiver.close();
      await first?.stop();
      await second?.stop();
    }
  });

  it('cuts off a request still unanswered when the service stops, and the next one delivers it again', async () => {
    const dbUrl = await freshDatabaseUrl();
    const receiver = await Receiver.start();
    receiver.answers.push({ status: 204, delayMs: 60_000 });
    let first: HooksService | undefined = await startHooksService({ dbUrl, env: schedule });
    let second: HooksService | undefined;
    try {
      const hook = await createHook(first, receiver.url, ['User.Created']);
      await first.emit('User.Created', { data: { id: 'u1' } });
      await receiver.waitFor(1);
      const stopping = performance.now();
      await first.stop();
      first = undefined;
      // The service's dispatcher waits 5 s for answers in flight, then cuts them off.
      expect(performance.now() - stopping).to.be.below(9000);
      const attempts = await whileStopped(dbUrl, (db) =>
        db('hook_attempts').where({ hook_id: hook.id }).select('status_code', 'error'),
      );
      expect(attempts).to.have.length(1);
      expect(attempts[0]).to.include({ status_code: null });
      expect(attempts[0].error).to.include('The dispatcher stopped before the answer came.');

      second = await startHooksService({ dbUrl, env: schedule });
      await receiver.waitFor(2, 20_000);
      expect(receiver.requests[1].headers['webhook-id']).to.equal(receiver.requests[0].headers['webhook-id']);
    } finally {
      await receiver.close();
      await first?.stop();
      await second?.stop();
    }
  });

  it('claims again a delivery whose dispatcher died mid-request, when its lease ends', async () => {
    const dbUrl = await freshDatabaseUrl();
    const receiver = await Receiver.down();
    let service = await startHooksService({ dbUrl, env: schedule });
    try {
      const hook = await createHook(service, receiver.url, ['Role.Created']);
      await service.emit('Role.Created', { data: { n: 1 } });
      await service.emit('Role.Created', { data: { n: 2 } });
      const rows = await deliveryRows(service, hook.id);
      await service.stop();
      // As a dispatcher that died mid-request leaves them: delivering, one lease over, one running 2.5 s more.
      await whileStopped(dbUrl, async (db) => {
        const now = Date.now();
        await db('hook_deliveries')
          .where({ id: rows[0].id })
          .update({ status: 'delivering', attempts: 1, lease_until: now - 1, next_attempt_at: now - 1 });
        await db('hook_deliveries')
          .where({ id: rows[1].id })
          .update({ status: 'delivering', attempts: 1, lease_until: now + 2500, next_attempt_at: now + 2500 });
      });
      await receiver.listen();
      const started = Date.now();
      service = await startHooksService({ dbUrl, env: schedule });
      const [early] = await receiver.waitFor(1, 10_000);
      expect(early.headers['webhook-id']).to.equal(rows[0].id);
      const requests = await receiver.waitFor(2, 10_000);
      expect(requests[1].headers['webhook-id']).to.equal(rows[1].id);
      expect(requests[1].receivedAt - started).to.be.greaterThan(2000);
      await eventually(
        async () => (await deliveryRows(service, hook.id)).every(({ status }) => status === 'succeeded'),
        5000,
        'succeeded',
      );
      // The claim after the crash is attempt 2.
      const attempts = await service
        .db('hook_attempts')
        .where({ hook_id: hook.id, result: 'Success' })
        .pluck('attempt');
      expect(attempts).to.deep.equal([2, 2]);
    } finally {
      await receiver.close();
      await service.stop();
    }
  });
});

(testDatabase === 'sqlite' ? describe.skip : describe)(
  `hooks: several instances on one ${testDatabase} database`,
  () => {
    it('deliver over 1,000 events with no loss and no duplicate webhook-id', async function () {
      // Three starts, 668 events written one by one and 1,002 deliveries: about 25 s on an idle 2-core
      // host, and more when the other engines' suites share its cores; its own wait allows 60 s.
      this.timeout(120_000);
      const dbUrl = await freshDatabaseUrl();
      const receiver = await Receiver.start();
      // Slow enough that every instance has deliveries in flight at once.
      receiver.answer = (_request, index) => ({ status: index % 17 === 0 ? 503 : 200, delayMs: 5 });
      const instances: HooksService[] = [];
      try {
        for (let index = 0; index < 3; index++) {
          // Instances of one deployment share one public ENDPOINT (and so one management API indicator).
          instances.push(
            await startHooksService({
              dbUrl,
              env: { ENDPOINT: 'http://hooks.test', HOOKS_RETRY_SCHEDULE: '0.2,0.2,0.2,0.2,0.2' },
            }),
          );
        }
        const [a] = instances;
        const hooks = [
          await createHook(a, receiver.url, ['User.Created', 'Organization.Created']),
          await createHook(a, receiver.url, ['User.Created']),
        ];
        const events: HookEvent[] = ['User.Created', 'Organization.Created'];
        const eventCount = 668;
        const deliveryCount = (eventCount / 2) * 3;
        // 668 events: User.Created goes to both hooks, Organization.Created to one — 1,002 deliveries. Half
        // are written by the instances (each wakes its own dispatcher), half by another connection (found
        // by the dispatchers' polls, all at once).
        const outsider = openDatabase(dbUrl);
        const outsiderCache = new SharedCache(outsider);
        try {
          await outsiderCache.sync();
          await Promise.all([
            ...instances.map(async (instance, which) => {
              for (let index = which; index < eventCount / 2; index += instances.length) {
                await instance.emit(events[index % 2], { data: { index } });
              }
            }),
            (async () => {
              for (let index = eventCount / 2; index < eventCount; index++) {
                await outsider.transaction((trx) =>
                  enqueueEvent(trx, outsiderCache, events[index % 2], { data: { index } }),
                );
              }
            })(),
          ]);
        } finally {
          await outsider.destroy();
        }
        const rows = await deliveryRows(a);
        expect(rows).to.have.length(deliveryCount);
        await eventually(
          async () => (await a.db('hook_deliveries').whereNot({ status: 'succeeded' }).count({ n: '*' }))[0].n == 0,
          60_000,
          'every delivery succeeded',
        );
        await sleep(500);
        const succeeded = receiver.requests.filter((_request, index) => index % 17 !== 0);
        const ids = succeeded.map((request) => String(request.headers['webhook-id']));
        expect(new Set(ids).size).to.equal(deliveryCount);
        expect(ids).to.have.length(deliveryCount);
        expect([...new Set(receiver.ids)].sort()).to.deep.equal(rows.map(({ id }) => id).sort());
        for (const hook of hooks) {
          expect(
            receiver.requests.filter((request) => JSON.parse(request.body).hookId === hook.id).length,
          ).to.be.greaterThan(0);
        }
        // The instances shared the work.
        expect(instances.filter((instance) => instance.dispatcher.stats.claimed > 0).length).to.be.at.least(2);
        // Each delivery succeeded once: attempts logged as Success, one per delivery.
        const successes = await a.db('hook_attempts').where({ result: 'Success' }).pluck('delivery_id');
        expect(successes).to.have.length(deliveryCount);
        expect(new Set(successes).size).to.equal(deliveryCount);
      } finally {
        await receiver.close();
        for (const instance of instances) {
          await instance.stop();
        }
      }
    });
  },
);
