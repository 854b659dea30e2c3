/**
 * `npm run bench:webhooks`: what webhooks cost and how fast they arrive.
 *
 * 1. Outbox cost: mutations/s of a representative change (create an organization) in its transaction,
 *    without calling the outbox, with the outbox and no hook subscribed, and with one hook subscribed
 *    (one delivery row written per change). Measured in this process on one connection, nothing else
 *    running; and, when the service's routes write events (wired), over HTTP with autocannon.
 * 2. Delivery: events/s from commit to receipt at a local receiver, with p50/p99 latency, for a burst
 *    and at a steady rate, with the dispatcher in this process (as in the service: woken by the commit)
 *    and as `npm run dispatcher` (a process of its own, finding events by polling).
 *
 *   BENCH_DB=sqlite|mysql BENCH_DURATION=5 BENCH_EVENTS=2000 BENCH_RATE=200 npm run bench:webhooks
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:http';
import { cpus } from 'node:os';

import autocannon from 'autocannon';
import { got } from 'got';
import type { Knex } from 'knex';

import { Dispatcher } from '../lib/hooks/dispatcher.ts';
import { enqueueEvent } from '../lib/hooks/outbox.ts';
import { hooksCache, insertHook } from '../lib/hooks/queries.ts';
import { createLogger } from '../lib/http/logger.ts';
import { insertOrganization } from '../lib/organizations/queries.ts';
import { openDatabase } from '../lib/storage/database.ts';
import { generateId, generateSecret } from '../lib/storage/ids.ts';
import { migrateToLatest } from '../lib/storage/migrate.ts';
import { bumpCacheVersion, SharedCache } from '../lib/storage/shared-cache.ts';
import { freePort } from '../test/support/service.ts';
import { dropBenchDatabases, freshBenchDatabase } from './databases.ts';
import { assertBuildCurrent, serviceEntry } from './servers.ts';

const database = process.env.BENCH_DB === 'mysql' ? 'mysql' : 'sqlite';
const duration = Number(process.env.BENCH_DURATION ?? 5);
const burstSize = Number(process.env.BENCH_EVENTS ?? 2000);
const rate = Number(process.env.BENCH_RATE ?? 200);
const workers = database === 'mysql' ? 16 : 1;

const newDatabaseUrl = () => freshBenchDatabase(database);
assertBuildCurrent();

// ---- the receiver: records when each event (by its `seq`) arrived ----

const received = new Map<number, number>();
let receivedCount = 0;
const receiverPort = await freePort();
const receiver = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const seq = (JSON.parse(Buffer.concat(chunks).toString()) as { seq?: number }).seq;
    if (typeof seq === 'number' && !received.has(seq)) {
      received.set(seq, performance.now());
    }
    receivedCount++;
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
{
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

async function startProcess(args: string[], env: Record<string, string>, port?: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, args, {
    env: { ...process.env, NODE_ENV: 'production', LOG_LEVEL: 'warn', HOOKS_ALLOW_PRIVATE_TARGETS: 'true', ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  if (port === undefined) {
    return child;
  }
  const started = Date.now();
  for (;;) {
    try {
      await got(`http://127.0.0.1:${port}/api/status`, { retry: { limit: 0 }, throwHttpErrors: false });
      return child;
    } catch (error) {
      if (Date.now() - started > 30_000 || child.exitCode !== null) {
        throw new Error(`${args.join(' ')} did not start`, { cause: error });
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

type HttpRate = { name: string; perSecond: number; p50: number; p99: number; non2xx: number; deliveries: number };
const httpRates: HttpRate[] = [];
{
  const port = await freePort();
  const dbUrl = await newDatabaseUrl();
  const admin = { id: 'bench-admin', secret: 'bench-admin-secret-0123456789' };
  const service = await startProcess(
    serviceEntry,
    {
      PORT: String(port),
      ENDPOINT: `http://127.0.0.1:${port}`,
      DB_URL: dbUrl,
      BOOTSTRAP_ADMIN_CLIENT_ID: admin.id,
      BOOTSTRAP_ADMIN_CLIENT_SECRET: admin.secret,
      WORKERS: '1',
    },
    port,
  );
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
    throwHttpErrors: false,
    retry: { limit: 0 },
  });
  const wired = (await api.get('hooks')).statusCode === 200;
  const measure = async (name: string): Promise<HttpRate> => {
    const options = {
      url: `${base}/api/organizations`,
      method: 'POST' as const,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ name: 'bench' }),
      connections: 16,
    };
    await autocannon({ ...options, duration: 1 });
    const before = receivedCount;
    const result = await autocannon({ ...options, duration });
    await new Promise((resolve) => setTimeout(resolve, 1000));
    return {
      name,
      perSecond: result.requests.average,
      p50: result.latency.p50,
      p99: result.latency.p99,
      non2xx: result.non2xx,
      deliveries: receivedCount - before,
    };
  };
  if (wired) {
    httpRates.push(await measure('POST /api/organizations, no hook'));
    await api.post('hooks', {
      json: { name: 'bench', events: ['Organization.Created'], config: { url: receiverUrl } },
    });
    httpRates.push(await measure('POST /api/organizations, 1 hook subscribed (delivered meanwhile)'));
  }
  service.kill('SIGTERM');
  await once(service, 'exit');
  if (!wired) {
    console.log('\n(the service does not register /api/hooks yet: HTTP figures skipped)');
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
    dispatcher = new Dispatcher({
      db,
      config: { hooksRetrySchedule: [1, 1, 1], hooksAllowPrivateTargets: true },
      logger,
    });
    dispatcher.start();
  } else {
    child = await startProcess(['--import', 'tsx', 'lib/hooks/dispatcher-cli.ts'], { DB_URL: dbUrl });
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
    const interval = 1000 / rate;
    for (let seq = 0; seq < count; seq++) {
      const due = started + seq * interval;
      const wait = due - performance.now();
      if (wait > 0) {
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
      await emit(seq);
    }
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
for (const inProcess of [true, false]) {
  const where = inProcess ? 'dispatcher in process' : 'npm run dispatcher';
  deliveries.push(await deliver(`${where}: burst of ${burstSize}`, inProcess, 'burst'));
  deliveries.push(await deliver(`${where}: steady ${rate}/s for ${duration} s`, inProcess, 'steady'));
}

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
  console.log('\nOver HTTP (autocannon, 16 connections):\n');
  console.log('| scenario | req/s | p50 ms | p99 ms | non-2xx | webhooks received |');
  console.log('|---|---:|---:|---:|---:|---:|');
  for (const result of httpRates) {
    console.log(
      `| ${result.name} | ${result.perSecond.toFixed(0)} | ${result.p50} | ${result.p99} | ${result.non2xx} | ${result.deliveries} |`,
    );
  }
}
console.log('\nDelivery, commit → receipt (one hook, local receiver answering 204):\n');
console.log('| scenario | delivered | events/s | p50 ms | p99 ms | max ms |');
console.log('|---|---:|---:|---:|---:|---:|');
for (const result of deliveries) {
  console.log(
    `| ${result.name} | ${result.events} | ${result.perSecond.toFixed(0)} | ${fixed(result.p50)} | ${fixed(result.p99)} | ${fixed(result.max)} |`,
  );
}
process.exit(0);
