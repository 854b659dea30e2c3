import { expect } from 'chai';

import { Dispatcher } from '../../lib/hooks/delivery/dispatcher.ts';
import { nextAllowedAt, rateAllowance, rateNextAfter } from '../../lib/hooks/delivery/hook-rate-limit.ts';
import { createLogger } from '../../lib/http/logger.ts';
import { freshDatabaseUrl, testDatabase } from '../support/database.ts';
import { eventually } from '../support/eventually.ts';
import { Receiver } from './receiver.ts';
import { createHook, type HooksService, startHooksService } from './support.ts';

/**
 * Two dispatchers on one database: on a server two service instances; on SQLite (one connection per
 * process) the service's and a second one on its connection, claiming in transactions of their own.
 */
async function twoDispatchers(env: Record<string, string>) {
  const dbUrl = await freshDatabaseUrl();
  const shared = { ENDPOINT: 'http://hooks.test', HOOKS_RETRY_SCHEDULE: '0.2,0.2,0.2', ...env };
  const first = await startHooksService({ dbUrl, env: shared });
  const second: HooksService | undefined =
    testDatabase === 'sqlite' ? undefined : await startHooksService({ dbUrl, env: shared });
  const extra =
    second === undefined
      ? new Dispatcher({ db: first.db, config: first.config, logger: createLogger(first.config) })
      : undefined;
  extra?.start();
  return {
    first,
    async stop() {
      await extra?.stop();
      await second?.stop();
      await first.stop();
    },
  };
}

/** The receiver answers after `delayMs`; `most` is the largest number of requests it held at once. */
function countInFlight(receiver: Receiver, delayMs: number): { most: number } {
  const seen = { most: 0 };
  let active = 0;
  receiver.answer = () => {
    active += 1;
    seen.most = Math.max(seen.most, active);
    // Registered before the receiver's own timer: counted down as the answer goes out.
    setTimeout(() => (active -= 1), delayMs);
    return { status: 200, delayMs };
  };
  return seen;
}

describe('hooks: per-hook concurrency cap and rate limit, across dispatchers', () => {
  let receiver: Receiver;
  beforeEach(async () => {
    receiver = await Receiver.start();
  });
  afterEach(async () => {
    await receiver.close();
  });

  it('never has more than HOOKS_CONCURRENCY_PER_HOOK requests in flight to one hook, all dispatchers together', async () => {
    const pair = await twoDispatchers({ HOOKS_CONCURRENCY_PER_HOOK: '3' });
    try {
      const inFlight = countInFlight(receiver, 40);
      const hook = await createHook(pair.first, receiver.url, ['User.Created']);
      const other = await createHook(pair.first, receiver.url, ['User.Created']);
      await Promise.all(
        Array.from({ length: 4 }, async (_, writer) => {
          for (let index = writer; index < 40; index += 4) {
            await pair.first.emit('User.Created', { data: { id: `u${index}` } });
          }
        }),
      );
      await receiver.waitFor(80, 40_000);
      const perHook = (id: string) => receiver.requests.filter((request) => JSON.parse(request.body).hookId === id);
      expect(perHook(hook.id)).to.have.length(40);
      expect(perHook(other.id)).to.have.length(40);
      // Two hooks, three each at most.
      expect(inFlight.most).to.be.at.most(6);
      expect(inFlight.most).to.be.at.least(2);
    } finally {
      await pair.stop();
    }
  });

  it('a hook with a cap of one gets its requests strictly one after another', async () => {
    const pair = await twoDispatchers({ HOOKS_CONCURRENCY_PER_HOOK: '1' });
    try {
      const inFlight = countInFlight(receiver, 20);
      await createHook(pair.first, receiver.url, ['Role.Created']);
      await Promise.all(
        Array.from({ length: 30 }, (_, index) => pair.first.emit('Role.Created', { data: { id: `r${index}` } })),
      );
      await receiver.waitFor(30, 40_000);
      expect(inFlight.most).to.equal(1);
    } finally {
      await pair.stop();
    }
  });

  it('sends a hook at most rateLimitPerSecond deliveries a second (plus one second of burst)', async () => {
    const pair = await twoDispatchers({});
    try {
      const hook = await createHook(pair.first, receiver.url, ['User.Created'], { rateLimitPerSecond: 10 });
      expect(hook).to.include({ rateLimitPerSecond: 10 });
      await Promise.all(
        Array.from({ length: 60 }, (_, index) => pair.first.emit('User.Created', { data: { id: `u${index}` } })),
      );
      await receiver.waitFor(60, 40_000);
      // When each was sent, as the dispatcher recorded it: arrival times at a receiver in this process
      // bunch whenever its event loop stalls (seen at load 10: 29 arrivals in one second).
      const attempts = await eventually(
        async () => {
          const rows = await pair.first
            .db('hook_attempts')
            .where({ hook_id: hook.id })
            .select('created_at', 'duration_ms');
          return rows.length === 60 && rows;
        },
        10_000,
        'the 60 attempts recorded',
      );
      const times = attempts
        .map((attempt) => Number(attempt.created_at) - Number(attempt.duration_ms))
        .sort((a, b) => a - b);
      // The limiter allows 10 × (W + 1) in any W seconds, on the clock of its claims: at most 30 in
      // two seconds. A send follows its claim after the claim's transaction, which a loaded database
      // stretches unevenly, so 5 more are allowed; no limit at all would send the 60 in one second.
      let busiest = 0;
      for (let first = 0, last = 0; last < times.length; last++) {
        while (times[last] - times[first] >= 2000) {
          first++;
        }
        busiest = Math.max(busiest, last - first + 1);
      }
      expect(busiest).to.be.at.most(35);
      // 60 at 10 a second, the first 10 at once: at least 5 s, give or take.
      expect(times[times.length - 1] - times[0]).to.be.at.least(4000);
    } finally {
      await pair.stop();
    }
  });
});

describe('hooks: the rate limiter (generic cell rate algorithm)', () => {
  it('allows a second of burst, then one per interval', () => {
    expect(rateAllowance(10, null, 0)).to.equal(10);
    const next = rateNextAfter(10, null, 0, 10);
    expect(next).to.equal(1000);
    expect(rateAllowance(10, next, 0)).to.equal(0);
    expect(rateAllowance(10, next, 99)).to.equal(0);
    expect(rateAllowance(10, next, 100)).to.equal(1);
    expect(nextAllowedAt(10, next, 0)).to.equal(100);
    expect(rateAllowance(3, null, 0)).to.equal(3);
    expect(rateAllowance(3, rateNextAfter(3, null, 0, 3), 333)).to.equal(0);
    expect(rateAllowance(3, rateNextAfter(3, null, 0, 3), 334)).to.equal(1);
  });
});
