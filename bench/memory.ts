/**
 * `npm run bench:memory`: the service's resident memory (VmRSS of each Node process) idle, under
 * many concurrent connections, and after them, beside the bare oidc-provider baseline. Each server
 * starts, serves one round of warm-up, idles `BENCH_IDLE` s (default 10) and is measured; then
 * `BENCH_CONNECTIONS` connections (default 500) ask for client-credentials tokens for
 * `BENCH_DURATION` s (default 15) while the resident set is sampled every 100 ms (its peak); then it
 * idles `BENCH_IDLE` s again and is measured once more. The service runs from the build with
 * WORKERS=1, on SQLite (`BENCH_DB=mysql` for MySQL/MariaDB, `BENCH_DB=postgres` for PostgreSQL).
 */
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';

import { freePort } from '../test/support/service.ts';
import { type DatabaseKind, dropBenchDatabases, freshBenchDatabase, singleBenchDatabase } from './databases.ts';
import { generateLoad, type Load, loadGenerator } from './load.ts';
import { startOutsideIssuer } from './outside-issuer.ts';
import { table, whole } from './report.ts';
import { baselineLoad, prepareService, serviceAdmin } from './scenarios.ts';
import { assertBuildCurrent, baselineEntry, type Server, serviceEntry, startServer } from './servers.ts';

const seconds = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const idle = seconds('BENCH_IDLE', 10);
const duration = seconds('BENCH_DURATION', 15);
const connections = seconds('BENCH_CONNECTIONS', 500);
const database: DatabaseKind = singleBenchDatabase();

/** The resident set of one process, MB (0 once it is gone). */
function rssMb(pid: number): number {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
  } catch {
    return 0;
  }
}

type Figures = { idle: number; peak: number; after: number; primary?: number; perSecond: number; failures: number };

/**
 * The resident set of the server's largest process: the bare provider's one process, or the
 * service's worker (in production a primary supervises the workers; its own is reported apart).
 */
const largestMb = (server: Server) => Math.max(...workerIds(server).map(rssMb));
const workerIds = (server: Server) => {
  const ids = server.processIds();
  return ids.length > 1 ? ids.slice(1) : ids;
};

async function measure(server: Server, load: Load): Promise<Figures> {
  await generateLoad(load, { connections: 32, threads: 1, seconds: 2 });
  await sleep(idle * 1000);
  const before = largestMb(server);
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, largestMb(server))), 100);
  const measured = await generateLoad(load, { connections, threads: 2, seconds: duration });
  clearInterval(sampler);
  await sleep(idle * 1000);
  const ids = server.processIds();
  return {
    idle: before,
    peak,
    after: largestMb(server),
    primary: ids.length > 1 ? rssMb(ids[0]) : undefined,
    perSecond: measured.perSecond,
    failures: measured.non2xx + measured.errors,
  };
}

assertBuildCurrent();
const loadBefore = loadavg()[0];
const rows: string[][] = [];
const row = (name: string, figures: Figures) => [
  name,
  whole(figures.idle),
  whole(figures.peak),
  whole(figures.after),
  figures.primary === undefined ? '—' : whole(figures.primary),
  whole(figures.perSecond),
  String(figures.failures),
];

const baseline = await startServer(baselineEntry, await freePort(), {});
try {
  rows.push(
    row(
      'baseline: bare oidc-provider (memory adapter)',
      await measure(baseline, baselineLoad(`http://127.0.0.1:${baseline.port}`)),
    ),
  );
} finally {
  await baseline.stop();
}

const port = await freePort();
const base = `http://127.0.0.1:${port}`;
const service = await startServer(serviceEntry, port, {
  ENDPOINT: base,
  DB_URL: await freshBenchDatabase(database),
  BOOTSTRAP_ADMIN_CLIENT_ID: serviceAdmin.id,
  BOOTSTRAP_ADMIN_CLIENT_SECRET: serviceAdmin.secret,
  WORKERS: '1',
});
// prepareService registers a trusted outside issuer for its exchange scenario; nothing here fetches its keys.
const outside = await startOutsideIssuer();
try {
  const loads = await prepareService(base, outside);
  rows.push(row(`service, ${database}, WORKERS=1`, await measure(service, loads['client-credentials'])));
} finally {
  await service.stop();
  await outside.stop();
  await dropBenchDatabases();
}

console.log(
  `\nNode ${process.version}; load generator ${loadGenerator.description}; client-credentials tokens; load average ${loadBefore.toFixed(1)} at the start, ${loadavg()[0].toFixed(1)} at the end.`,
);
console.log(
  `Resident set (VmRSS) of the server process (the service's worker; its primary apart): after ${idle} s idle, the peak while ${connections} connections asked for ${duration} s, and after ${idle} s idle again.\n`,
);
console.log(
  table(
    [
      'server',
      'idle MB',
      `peak MB (${connections} connections)`,
      'after MB',
      'primary MB',
      'req/s',
      'non-2xx + errors',
    ],
    ['left', 'right', 'right', 'right', 'right', 'right', 'right'],
    rows,
  ),
);
