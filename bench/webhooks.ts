/**
 * `npm run bench:webhooks`: what webhooks cost and how fast they arrive.
 *
 * 1. Outbox cost: mutations/s of a representative change (create an organization) in its transaction,
 *    without calling the outbox, with the outbox and no hook subscribed, and with one hook subscribed
 *    (one delivery row written per change). Measured in this process on one connection, nothing else
 *    running; and over HTTP with autocannon, rounds without the hook and with it (enabled, delivering
 *    meanwhile) interleaved: requests/s, p99, and the service's CPU time per request (read from /proc,
 *    which other work on a shared machine does not change as much as it changes requests/s), counted
 *    until the round's webhooks are all in.
 * 2. Delivery: events/s from commit to receipt at a local receiver, with p50/p99 latency, for a burst
 *    and at a steady rate, with the dispatcher in this process (as in the service: woken by the commit)
 *    and as `npm run dispatcher` (a process of its own, finding events by polling).
 *
 *   BENCH_DB=sqlite|mysql|postgres BENCH_DURATION=5 BENCH_EVENTS=2000 BENCH_RATE=1000 npm run bench:webhooks
 *
 * 3. Recover: BENCH_RECOVER (default 10,000) failed deliveries of one hook re-queued by one
 *    `POST /hooks/:id/recover` job (a job runner and a dispatcher in this process): how long the job
 *    takes, and until the last of them is received.
 *
 * BENCH_PARTS=outbox,http,delivery,recover (the default: all four) runs only the parts named.
 * BENCH_ROUNDS=3: HTTP rounds without and with the hook, interleaved (medians reported).
 * BENCH_PROFILE=<dir> writes a V8 CPU profile of the service (as `npm run bench` does) there.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:http';
import { cpus } from 'node:os';
import autocannon from 'autocannon';
import { got } from 'got';
import type { Knex } from 'knex';

import { insertDeliveries } from '../lib/hooks/delivery/delivery-queries.ts';
import { Dispatcher } from '../lib/hooks/delivery/dispatcher.ts';
import { findJob } from '../lib/hooks/jobs/job-queries.ts';
import { JobRunner } from '../lib/hooks/jobs/job-runner.ts';
import { createJob } from '../lib/hooks/jobs/jobs.ts';
import { deliveriesOf, enqueueEvent } from '../lib/hooks/outbox.ts';
import { findHook, hooksCache, insertHook } from '../lib/hooks/queries.ts';
import { createLogger } from '../lib/http/logger.ts';
import { insertOrganization } from '../lib/organizations/queries.ts';
import { openDatabase } from '../lib/storage/database.ts';
import { generateId, generateSecret } from '../lib/storage/ids.ts';
import { migrateToLatest } from '../lib/storage/migrate.ts';
import { bumpCacheVersion, SharedCache } from '../lib/storage/shared-cache.ts';
import { withTransaction } from '../lib/storage/transaction.ts';
import { freePort } from '../test/support/service.ts';
import { dropBenchDatabases, freshBenchDatabase, singleBenchDatabase } from './databases.ts';
import { assertBuildCurrent, serviceEntry, startServer } from './servers.ts';

/** The dispatcher's settings in the bench: retries a second apart, the defaults otherwise. */
const dispatcherConfig = {
  hooksRetrySchedule: [1, 1, 1],
  hooksAllowPrivateTargets: true,
  hooksDisableAfter: 432_000,
  hooksConcurrencyPerHook: 32,
};

const database = singleBenchDatabase();
const duration = Number(process.env.BENCH_DURATION ?? 5);
const burstSize = Number(process.env.BENCH_EVENTS ?? 2000);
const rate = Number(process.env.BENCH_RATE ?? 1000);
const workers = database === 'sqlite' ? 1 : 16;
const parts = new Set((process.env.BENCH_PARTS ?? 'outbox,http,delivery,recover').split(','));
const recoverSize = Number(process.env.BENCH_RECOVER ?? 10_000);

const newDatabaseUrl = () => freshBenchDatabase(database);
assertBuildCurrent();

// ---- the receiver: records when each event (by its `seq`) arrived ----

const received = new Map<number, number>();
let receivedCount = 0;
/** created → received (ms) of each webhook of an HTTP round, from its envelope's `createdAt`. */
const arrivals: number[] = [];
let lastArrival = 0;
const receiverPort = await freePort();
const receiver = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const { seq, createdAt } = JSON.parse(Buffer.concat(chunks).toString()) as { seq?: number; createdAt: string };
    if (typeof seq === 'number' && !received.has(seq)) {
      received.set(seq, performance.now());
    }
    receivedCount++;
    lastArrival = performance.now();
    arrivals.push(Date.now() - Date.parse(createdAt));
    response.writeHead(204).end();
  });
});
await new Promise<void>((resolve) => receiver.listen(receiverPort, '127.0.0.1', () => resolve()));
const receiverUrl = `http://127.0.0.1:${receiverPort}/hook`;

async function addHook(db: Knex, events = ['Organization.Created']): Promise<string> {
  const id = generateId();
  await db.transaction(async (trx) => {
    await insertHook(trx, {
      tenantId: 'default',
      id,
      name: 'bench',
      event: null,
      events: events as never,
      config: { url: receiverUrl },
      signingKey: generateSecret(),
      enabled: true,
      createdAt: Date.now(),
      signatureScheme: 'hmac-sha256',
      payload: 'full',
      excludeApplicationIds: [],
    });
    await bumpCacheVersion(trx, hooksCache);
  });
  return id;
}

const organization = (name: string) => ({
  tenantId: 'default',
  id: generateId(),
  name,
  description: null,
  customData: {},
  isMfaRequired: false,
  color: {},
  branding: {},
  customCss: null,
  createdAt: Date.now(),
});

// ---- 1. the outbox's cost ----

type Rate = { name: string; perSecond: number; p50: number; p99: number };
const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
};

async function mutationRate(name: string, db: Knex, cache: SharedCache, outbox: boolean): Promise<Rate> {
  const latencies: number[] = [];
  const run = async (seconds: number) => {
    const deadline = performance.now() + seconds * 1000;
    await Promise.all(
      Array.from({ length: workers }, async () => {
        while (performance.now() < deadline) {
          const started = performance.now();
          await db.transaction(async (trx) => {
            const created = organization('bench');
            await insertOrganization(trx, created);
            if (outbox) {
              await enqueueEvent(trx, cache, 'Organization.Created', {
                data: created,
                path: '/api/organizations',
                method: 'POST',
                status: 201,
              });
            }
          });
          latencies.push(performance.now() - started);
        }
      }),
    );
  };
  await run(1); // warm-up
  latencies.length = 0;
  const started = performance.now();
  await run(duration);
  const seconds = (performance.now() - started) / 1000;
  return {
    name,
    perSecond: latencies.length / seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
  };
}

const logger = createLogger({ production: true, logLevel: 'silent' });
const rates: Rate[] = [];
if (parts.has('outbox')) {
  const db = openDatabase(await newDatabaseUrl());
  await migrateToLatest(db);
  const cache = new SharedCache(db);
  await cache.sync();
  rates.push(await mutationRate('change alone (no outbox call)', db, cache, false));
  rates.push(await mutationRate('change + outbox, no hook subscribed', db, cache, true));
  await addHook(db);
  await cache.sync();
  rates.push(await mutationRate('change + outbox, 1 hook subscribed (1 delivery row)', db, cache, true));
  await db.destroy();
}

// ---- over HTTP, when the service writes events for its routes ----

function startProcess(args: string[], env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, args, {
    env: { ...process.env, NODE_ENV: 'production', LOG_LEVEL: 'warn', HOOKS_ALLOW_PRIVATE_TARGETS: 'true', ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

type HttpRate = {
  name: string;
  perSecond: number;
  p99: number;
  cpuMs: number;
  non2xx: number;
  /** Webhooks received for the round's events, how long after the round they were all in, created → received p99. */
  deliveries: number;
  drainedMs: number;
  deliveryP99: number;
};
const httpRates: HttpRate[] = [];
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
if (parts.has('http')) {
  const port = await freePort();
  const admin = { id: 'bench-admin', secret: 'bench-admin-secret-0123456789' };
  const service = await startServer(serviceEntry, port, {
    ENDPOINT: `http://127.0.0.1:${port}`,
    DB_URL: await newDatabaseUrl(),
    BOOTSTRAP_ADMIN_CLIENT_ID: admin.id,
    BOOTSTRAP_ADMIN_CLIENT_SECRET: admin.secret,
    WORKERS: '1',
    LOG_LEVEL: 'warn',
    HOOKS_ALLOW_PRIVATE_TARGETS: 'true',
  });
  const base = `http://127.0.0.1:${port}`;
  const { access_token: token } = await got
    .post(`${base}/oidc/token`, {
      form: { grant_type: 'client_credentials', resource: `${base}/api`, scope: 'all' },
      headers: { authorization: `Basic ${Buffer.from(`${admin.id}:${admin.secret}`).toString('base64')}` },
    })
    .json<{ access_token: string }>();
  const api = got.extend({
    prefixUrl: `${base}/api`,
    headers: { authorization: `Bearer ${token}` },
    retry: { limit: 0 },
  });
  const options = {
    url: `${base}/api/organizations`,
    method: 'POST' as const,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ name: 'bench' }),
    connections: 16,
  };
  const { id: hookId } = await api
    .post('hooks', {
      json: { name: 'bench', events: ['Organization.Created'], config: { url: receiverUrl }, enabled: false },
    })
    .json<{ id: string }>();
  const measure = async (name: string, hooked: boolean): Promise<HttpRate> => {
    await api.patch(`hooks/${hookId}`, { json: { enabled: hooked } });
    await autocannon({ ...options, duration: 1 });
    await drain(receivedCount, 0);
    const before = receivedCount;
    arrivals.length = 0;
    const cpuBefore = service.cpuSeconds();
    const result = await autocannon({ ...options, duration });
    const ended = performance.now();
    const created = hooked ? result['2xx'] : 0;
    await drain(before, created);
    // Until the round's webhooks are all in: a dispatcher that falls behind spends its CPU later.
    const cpu = service.cpuSeconds() - cpuBefore;
    return {
      name,
      perSecond: result.requests.average,
      p99: result.latency.p99,
      cpuMs: (cpu * 1000) / Math.max(1, result.requests.total),
      non2xx: result.non2xx,
      deliveries: receivedCount - before,
      drainedMs: hooked ? Math.max(0, lastArrival - ended) : 0,
      deliveryP99: hooked ? percentile(arrivals, 99) : Number.NaN,
    };
  };
  for (let round = 0; round < rounds; round++) {
    httpRates.push(await measure('POST /api/organizations, no hook', false));
    httpRates.push(await measure('POST /api/organizations, 1 hook subscribed (delivered meanwhile)', true));
  }
  await service.stop();
}

/** Waits (up to a minute) until `count` more webhooks than `before` arrived and the stream stops. */
async function drain(before: number, count: number): Promise<void> {
  const deadline = Date.now() + 60_000;
  let seen = -1;
  while (Date.now() < deadline && (receivedCount - before < count || receivedCount !== seen)) {
    seen = receivedCount;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

// ---- 2. delivery: commit → receipt ----

type Delivery = { name: string; events: number; perSecond: number; p50: number; p99: number; max: number };

async function deliver(name: string, inProcess: boolean, mode: 'burst' | 'steady'): Promise<Delivery> {
  const dbUrl = await newDatabaseUrl();
  const db = openDatabase(dbUrl);
  await migrateToLatest(db);
  const cache = new SharedCache(db);
  await addHook(db);
  await cache.sync();
  let dispatcher: Dispatcher | undefined;
  let child: ChildProcess | undefined;
  if (inProcess) {
    dispatcher = new Dispatcher({ db, config: dispatcherConfig, logger });
    dispatcher.start();
  } else {
    child = startProcess(['--import', 'tsx', 'lib/hooks/delivery/dispatcher-cli.ts'], { DB_URL: dbUrl });
    await new Promise((resolve) => setTimeout(resolve, 1500));
  }
  received.clear();
  const committed = new Map<number, number>();
  const count = mode === 'burst' ? burstSize : rate * duration;
  const emit = async (seq: number) => {
    await db.transaction((trx) =>
      enqueueEvent(trx, cache, 'Organization.Created', { seq, data: organization('bench') }),
    );
    committed.set(seq, performance.now());
  };
  const started = performance.now();
  if (mode === 'burst') {
    let next = 0;
    await Promise.all(
      Array.from({ length: workers }, async () => {
        while (next < count) {
          await emit(next++);
        }
      }),
    );
  } else {
    // Each event committed when due, not after the previous one's commit (up to `workers` at once).
    const interval = 1000 / rate;
    const pending = new Set<Promise<void>>();
    for (let seq = 0; seq < count; seq++) {
      const due = started + seq * interval;
      const wait = due - performance.now();
      if (wait > 0) {
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
      if (pending.size >= workers) {
        await Promise.race(pending);
      }
      const emitted = emit(seq).finally(() => pending.delete(emitted));
      pending.add(emitted);
    }
    await Promise.all(pending);
  }
  const deadline = Date.now() + 120_000;
  while (received.size < count && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const finished = Math.max(...received.values());
  const latencies = [...received].map(([seq, at]) => {
    const sent = committed.get(seq);
    if (sent === undefined) {
      throw new Error(`delivery ${seq} arrived but was never committed`);
    }
    return at - sent;
  });
  await dispatcher?.stop();
  if (child) {
    child.kill('SIGTERM');
    await once(child, 'exit');
  }
  await db.destroy();
  return {
    name,
    events: received.size,
    perSecond: received.size / ((finished - started) / 1000),
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    max: Math.max(...latencies),
  };
}

const deliveries: Delivery[] = [];
for (const inProcess of parts.has('delivery') ? [true, false] : []) {
  const where = inProcess ? 'dispatcher in process' : 'npm run dispatcher';
  deliveries.push(await deliver(`${where}: burst of ${burstSize}`, inProcess, 'burst'));
  deliveries.push(await deliver(`${where}: steady ${rate}/s for ${duration} s`, inProcess, 'steady'));
}

// ---- 3. recover: failed deliveries re-queued by one job, until the last arrives ----

type Recovery = { deliveries: number; jobMs: number; drainedMs: number; received: number };

async function recover(count: number): Promise<Recovery> {
  const db = openDatabase(await newDatabaseUrl());
  await migrateToLatest(db);
  const hookId = await addHook(db);
  // As an outage leaves them: failed, their schedule spent.
  const createdAt = Date.now() - 60_000;
  const subscription = { hookId, payload: 'full' as const, excludeApplicationIds: [] };
  for (let from = 0; from < count; from += 500) {
    const batch = Array.from({ length: Math.min(500, count - from) }, (_, index) =>
      deliveriesOf([subscription], 'Organization.Created', createdAt, { seq: from + index }),
    ).flat();
    await insertDeliveries(db, batch, createdAt);
  }
  await db('hook_deliveries')
    .where({ hook_id: hookId })
    .update({ status: 'failed', attempts: 10, next_attempt_at: null });
  received.clear();
  const dispatcher = new Dispatcher({ db, config: dispatcherConfig, logger });
  const runner = new JobRunner({ db, logger });
  dispatcher.start();
  runner.start();
  const started = performance.now();
  const job = await withTransaction(db, async (trx) => {
    const hook = await findHook(trx, hookId);
    if (!hook) {
      throw new Error('the bench hook is gone');
    }
    return createJob(trx, hook, 'recover', { since: createdAt - 1000, until: Date.now() });
  });
  let jobMs = Number.NaN;
  const deadline = Date.now() + 300_000;
  while (received.size < count && Date.now() < deadline) {
    if (Number.isNaN(jobMs) && (await findJob(db, hookId, job.id))?.status === 'done') {
      jobMs = performance.now() - started;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const drainedMs = Math.max(...received.values()) - started;
  await runner.stop();
  await dispatcher.stop();
  await db.destroy();
  return { deliveries: count, jobMs, drainedMs, received: received.size };
}

const recovery = parts.has('recover') ? await recover(recoverSize) : undefined;

receiver.close();
await dropBenchDatabases();

const fixed = (value: number, digits = 1) => (Number.isFinite(value) ? value.toFixed(digits) : '-');
console.log(
  `\n${cpus().length} cores (${cpus()[0]?.model}), Node ${process.version}, ${database}, ${duration} s runs, ${workers} writer(s)\n`,
);
console.log('Outbox cost (one transaction per change, this process):\n');
console.log('| scenario | changes/s | p50 ms | p99 ms |');
console.log('|---|---:|---:|---:|');
for (const result of rates) {
  console.log(
    `| ${result.name} | ${result.perSecond.toFixed(0)} | ${fixed(result.p50, 2)} | ${fixed(result.p99, 2)} |`,
  );
}
if (httpRates.length > 0) {
  console.log(`\nOver HTTP (autocannon, 16 connections, ${rounds} rounds of each, interleaved):\n`);
  console.log(
    '| scenario | req/s | p99 ms | service CPU ms/req | non-2xx | webhooks received | all in after ms | created → received p99 ms |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
  for (const result of httpRates) {
    console.log(
      `| ${result.name} | ${result.perSecond.toFixed(0)} | ${result.p99} | ${result.cpuMs.toFixed(3)} | ${result.non2xx} | ${result.deliveries} | ${fixed(result.drainedMs, 0)} | ${fixed(result.deliveryP99, 0)} |`,
    );
  }
  const median = (values: number[]) => percentile(values, 50);
  const of = (hooked: boolean) => httpRates.filter((result) => result.name.includes('hook subscribed') === hooked);
  const [plain, hooked] = [of(false), of(true)];
  const rate = median(hooked.map((result) => result.perSecond)) / median(plain.map((result) => result.perSecond));
  const cpu = median(plain.map((result) => result.cpuMs)) / median(hooked.map((result) => result.cpuMs));
  console.log(
    `\nWith the hook, medians: ${(rate * 100).toFixed(0)}% of the requests/s without it; ${(cpu * 100).toFixed(0)}% by service CPU per request (no-hook CPU/req ÷ hook CPU/req).`,
  );
}
console.log('\nDelivery, commit → receipt (one hook, local receiver answering 204):\n');
console.log('| scenario | delivered | events/s | p50 ms | p99 ms | max ms |');
console.log('|---|---:|---:|---:|---:|---:|');
for (const result of deliveries) {
  console.log(
    `| ${result.name} | ${result.events} | ${result.perSecond.toFixed(0)} | ${fixed(result.p50)} | ${fixed(result.p99)} | ${fixed(result.max)} |`,
  );
}
if (recovery) {
  console.log('\nRecover (one job re-queues the failed deliveries of one hook; dispatcher in process):\n');
  console.log('| failed deliveries | job done after ms | all received after ms | received |');
  console.log('|---:|---:|---:|---:|');
  console.log(
    `| ${recovery.deliveries} | ${fixed(recovery.jobMs, 0)} | ${fixed(recovery.drainedMs, 0)} | ${recovery.received} |`,
  );
}
process.exit(0);
