/**
 * `npm run bench` (also `npm run bench:token-exchange`): token-endpoint throughput and latency of the
 * service (client credentials, token exchange: plain, with an actor, of an outside issuer's JWT) beside a bare oidc-provider baseline, measured from
 * outside: every server is a process of its own in production mode with its logs on, and the load
 * generator (`wrk`, else autocannon's CLI) is a process of its own too. Rounds are interleaved
 * (baseline, client credentials, token exchange, baseline, ...) so that a machine busy with something
 * else for a while slows every scenario alike; the report gives medians and ranges over the rounds,
 * and each round's service figure as a ratio to the baseline round run just before it.
 *
 *   BENCH_ROUNDS=3 BENCH_DURATION=8 BENCH_WARMUP=2 BENCH_CONNECTIONS=32 BENCH_THREADS=1
 *   BENCH_DB=sqlite,mysql,postgres  any of them (`both`: sqlite,mysql); default SQLite and every server
 *                                 that answers at TEST_MYSQL_URL / TEST_POSTGRES_URL
 *   BENCH_WORKERS=1,2             WORKERS values the service runs with (default 1 and the number of cores)
 *   BENCH_PIN=1                   servers on some CPUs, the load generator on others (taskset);
 *                                 BENCH_SERVER_CPUS / BENCH_LOAD_CPUS override the split
 *   BENCH_LOAD=wrk|autocannon     default wrk when installed
 *   BENCH_ONLY=token-exchange     one scenario (or a comma-separated list): baseline, client-credentials, token-exchange,
 *                                 token-exchange-actor, token-exchange-outside-issuer
 *   BENCH_PROFILE=<dir>           V8 CPU profiles of the server processes, written there when they stop
 */
import { readFileSync } from 'node:fs';
import { cpus, loadavg, release, type } from 'node:os';

import { freePort } from '../test/support/service.ts';
import {
  benchDatabases,
  type DatabaseKind,
  databaseVersion,
  dropBenchDatabases,
  freshBenchDatabase,
} from './databases.ts';
import { generateLoad, type Load, loadGenerator, type LoadOptions, type Measured } from './load.ts';
import { type OutsideIssuer, startOutsideIssuer } from './outside-issuer.ts';
import { hundredths, median, medianAndRange, range, table, tenths, whole } from './report.ts';
import {
  assertAnswers,
  baselineLoad,
  prepareService,
  type ScenarioName,
  scenarioNames,
  scenarioTitles,
  serviceAdmin,
} from './scenarios.ts';
import {
  assertBuildCurrent,
  baselineEntry,
  type Server,
  serviceCommand,
  serviceEntry,
  startServer,
} from './servers.ts';

function positive(name: string, fallback: number): number {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(value) || value < 0) {
    throw new Error(`${name} must be a whole number, not ${process.env[name]}`);
  }
  return value;
}

const rounds = Math.max(1, positive('BENCH_ROUNDS', 3));
const duration = Math.max(1, positive('BENCH_DURATION', 8));
const warmup = positive('BENCH_WARMUP', 2);
const connections = Math.max(1, positive('BENCH_CONNECTIONS', 32));
const threads = Math.max(1, positive('BENCH_THREADS', 1));
const cores = cpus().length;

const only = process.env.BENCH_ONLY?.split(',').map((name) => name.trim());
for (const name of only ?? []) {
  if (!(scenarioNames as readonly string[]).includes(name)) {
    throw new Error(`BENCH_ONLY: unknown scenario ${name} (${scenarioNames.join(', ')})`);
  }
}
const scenarios = scenarioNames.filter((name) => !only || only.includes(name));
const serviceScenarios = scenarios.filter((name) => name !== 'baseline');

const databases: DatabaseKind[] = await benchDatabases();

const workerCounts = (process.env.BENCH_WORKERS ?? (cores > 1 ? `1,${cores}` : '1')).split(',').map((text) => {
  const count = Number(text.trim());
  if (!Number.isInteger(count) || count < 1) {
    throw new Error(`BENCH_WORKERS must list whole numbers, not ${process.env.BENCH_WORKERS}`);
  }
  return count;
});

const pin = ((): { servers: string; load: string } | undefined => {
  if (!process.env.BENCH_PIN || process.env.BENCH_PIN === '0') {
    return undefined;
  }
  if (cores < 2 && !(process.env.BENCH_SERVER_CPUS && process.env.BENCH_LOAD_CPUS)) {
    throw new Error('BENCH_PIN needs at least 2 cores');
  }
  // By default the load generator gets a quarter of the cores (at least one), the last ones.
  const loadCores = Math.max(1, Math.floor(cores / 4));
  const list = (from: number, to: number) => (from === to ? String(from) : `${from}-${to}`);
  return {
    servers: process.env.BENCH_SERVER_CPUS ?? list(0, cores - loadCores - 1),
    load: process.env.BENCH_LOAD_CPUS ?? list(cores - loadCores, cores - 1),
  };
})();

assertBuildCurrent();

// ---- measuring ----

type Group = { database?: DatabaseKind; workers: number; processes?: number };
type Round = { group: Group; round: number; scenario: ScenarioName; measured: Measured; cpuMsPerRequest: number };

const loadOptions = (seconds: number): LoadOptions => ({ connections, threads, seconds, cpus: pin?.load });
const progress = (text: string) => process.stderr.write(`${text}\n`);
const groupLabel = (group: Group) => (group.database ? `${group.database}, WORKERS=${group.workers}` : 'baseline only');

async function measureRound(server: Server, load: Load): Promise<{ measured: Measured; cpuMsPerRequest: number }> {
  const cpuBefore = server.cpuSeconds();
  const measured = await generateLoad(load, loadOptions(duration));
  const cpuMsPerRequest = ((server.cpuSeconds() - cpuBefore) * 1000) / Math.max(1, measured.requests);
  return { measured, cpuMsPerRequest };
}

function present<T>(value: T | undefined, missing: string): T {
  if (value === undefined) {
    throw new Error(missing);
  }
  return value;
}

const startedAt = new Date();
const loadBefore = loadavg()[0];
const profiled: string[] = [];
const results: Round[] = [];

const baseline = scenarios.includes('baseline')
  ? await startServer(baselineEntry, await freePort(), {}, pin?.servers)
  : undefined;
if (baseline) {
  profiled.push(`baseline: pid ${baseline.pid}`);
}

// The outside issuer of the token-exchange-outside-issuer scenario, on this machine's loopback.
const outside: OutsideIssuer | undefined = serviceScenarios.length > 0 ? await startOutsideIssuer() : undefined;

const groups: Group[] =
  serviceScenarios.length === 0
    ? [{ workers: 1 }]
    : databases.flatMap((database) => workerCounts.map((workers) => ({ database, workers })));

try {
  for (const group of groups) {
    const loads = new Map<ScenarioName, Load>();
    const servers = new Map<ScenarioName, Server>();
    if (baseline) {
      loads.set('baseline', baselineLoad(`http://127.0.0.1:${baseline.port}`));
      servers.set('baseline', baseline);
    }
    let service: Server | undefined;
    if (group.database) {
      const port = await freePort();
      const base = `http://127.0.0.1:${port}`;
      progress(`${groupLabel(group)}: starting the service (${serviceCommand})`);
      service = await startServer(
        serviceEntry,
        port,
        {
          ENDPOINT: base,
          DB_URL: await freshBenchDatabase(group.database),
          BOOTSTRAP_ADMIN_CLIENT_ID: serviceAdmin.id,
          BOOTSTRAP_ADMIN_CLIENT_SECRET: serviceAdmin.secret,
          WORKERS: String(group.workers),
          // The outside issuer's key set is fetched from 127.0.0.1: the documented allowance for
          // loopback targets (off by default in production); nothing else in the bench fetches.
          HOOKS_ALLOW_PRIVATE_TARGETS: 'true',
        },
        pin?.servers,
      );
      profiled.push(`service (${groupLabel(group)}): pid ${service.pid}`);
      const prepared = await prepareService(base, present(outside, 'no outside issuer'));
      for (const name of serviceScenarios) {
        loads.set(name, prepared[name]);
        servers.set(name, service);
      }
    }
    const loadOf = (name: ScenarioName) => present(loads.get(name), `no load for the ${name} scenario`);
    for (const name of scenarios) {
      await assertAnswers(name, loadOf(name));
      if (warmup > 0) {
        await generateLoad(loadOf(name), loadOptions(warmup));
      }
    }
    // Counted once warm: a cluster forks its workers at start-up, or replaces one that died.
    group.processes = service?.processIds().length;
    for (let round = 1; round <= rounds; round++) {
      for (const name of scenarios) {
        const { measured, cpuMsPerRequest } = await measureRound(
          present(servers.get(name), `no server for the ${name} scenario`),
          loadOf(name),
        );
        results.push({ group, round, scenario: name, measured, cpuMsPerRequest });
        progress(
          `${groupLabel(group)}, round ${round}/${rounds}, ${name}: ${whole(measured.perSecond)} req/s, p50 ${tenths(measured.p50)} ms, p99 ${tenths(measured.p99)} ms`,
        );
      }
    }
    await service?.stop();
  }
} finally {
  await baseline?.stop();
  await outside?.stop();
  await dropBenchDatabases();
}

// ---- the report ----

const versions = await Promise.all(databases.map(databaseVersion));
const oidcProvider = (
  JSON.parse(readFileSync('node_modules/oidc-provider/package.json', 'utf8')) as { version: string }
).version;
const benchEnv = Object.entries(process.env)
  .filter(([name]) => name.startsWith('BENCH_') || name === 'TEST_MYSQL_URL' || name === 'TEST_POSTGRES_URL')
  .sort(([a], [b]) => a.localeCompare(b))
  .map(([name, value]) => `${name}=${value}`);
const script = process.env.npm_lifecycle_event
  ? `npm run ${process.env.npm_lifecycle_event}`
  : 'node --import tsx bench/run.ts';

const baselineRound = (group: Group, round: number) =>
  results.find((result) => result.group === group && result.round === round && result.scenario === 'baseline');

function row(title: string, group: Group | undefined, measured: Round[]): string[] {
  const perSecond = measured.map((result) => result.measured.perSecond);
  const ratios = measured.flatMap((result) => {
    const reference = baselineRound(result.group, result.round);
    return reference ? [result.measured.perSecond / reference.measured.perSecond] : [];
  });
  const failures = measured.reduce((sum, result) => sum + result.measured.non2xx + result.measured.errors, 0);
  const workers = group?.database
    ? `${group.workers} (${group.processes} process${group.processes === 1 ? '' : 'es'})`
    : '1';
  return [
    title,
    group?.database ?? '—',
    workers,
    whole(median(perSecond)),
    range(perSecond, whole),
    ratios.length === 0 ? '—' : medianAndRange(ratios, hundredths),
    tenths(median(measured.map((result) => result.measured.p50))),
    range(
      measured.map((result) => result.measured.p99),
      tenths,
    ),
    hundredths(median(measured.map((result) => result.cpuMsPerRequest))),
    String(failures),
  ];
}

const summary: string[][] = [];
const baselineRounds = results.filter((result) => result.scenario === 'baseline');
if (baselineRounds.length > 0) {
  summary.push(
    row(
      `${scenarioTitles.baseline} (${baselineRounds.length} round${baselineRounds.length === 1 ? '' : 's'})`,
      undefined,
      baselineRounds,
    ),
  );
}
for (const group of groups) {
  for (const name of serviceScenarios) {
    summary.push(
      row(
        scenarioTitles[name],
        group,
        results.filter((result) => result.group === group && result.scenario === name),
      ),
    );
  }
}

const machine = [
  `${cores} cores (${cpus()[0]?.model.trim()}), ${type()} ${release()}, Node ${process.version}`,
  `load average ${loadBefore.toFixed(1)} at the start, ${loadavg()[0].toFixed(1)} at the end`,
].join('; ');
const setup = [
  `load generator: ${loadGenerator.description}, its own process${loadGenerator.name === 'wrk' ? `, ${threads} thread${threads === 1 ? '' : 's'}` : ''}`,
  pin
    ? `pinned with taskset: servers on CPUs ${pin.servers}, load generator on CPUs ${pin.load} (the database server is not pinned)`
    : 'not pinned',
  `${connections} connections, ${rounds} round${rounds === 1 ? '' : 's'} of ${duration} s after ${warmup} s of warm-up`,
  `baseline: bare oidc-provider ${oidcProvider}, memory adapter, ES256 JWT`,
  ...(serviceScenarios.length > 0
    ? [
        `service: \`${serviceCommand}\`, NODE_ENV=production, LOG_LEVEL=info to /dev/null, fresh ${versions.join(' / ')} database per group`,
      ]
    : []),
].join('; ');

const raw = results.map((result) => [
  result.group.database ?? '—',
  result.group.database ? String(result.group.workers) : '—',
  String(result.round),
  result.scenario,
  whole(result.measured.perSecond),
  tenths(result.measured.p50),
  tenths(result.measured.p99),
  hundredths(result.cpuMsPerRequest),
  String(result.measured.non2xx),
  String(result.measured.errors),
]);

console.log(`### Token endpoint, ${startedAt.toISOString().slice(0, 10)}

\`\`\`sh
${[...benchEnv, script].join(' ')}
\`\`\`

${machine}.

${setup}.

${table(
  [
    'scenario',
    'database',
    'WORKERS (processes)',
    'req/s median',
    'req/s range',
    'ratio to baseline',
    'p50 ms',
    'p99 ms (range)',
    'server CPU ms/req',
    'non-2xx + errors',
  ],
  ['left', 'left', 'right', 'right', 'right', 'right', 'right', 'right', 'right', 'right'],
  summary,
)}

Ratio: each round's req/s over the baseline round run just before it (median and range). p50: median
over the rounds; p99: range over the rounds. Server CPU: user + system time of the server's processes
during the round, per request.

Raw rounds, in the order they ran:

${table(
  ['database', 'WORKERS', 'round', 'scenario', 'req/s', 'p50 ms', 'p99 ms', 'server CPU ms/req', 'non-2xx', 'errors'],
  ['left', 'right', 'right', 'left', 'right', 'right', 'right', 'right', 'right', 'right'],
  raw,
)}`);

if (process.env.BENCH_PROFILE) {
  progress(
    `\nCPU profiles in ${process.env.BENCH_PROFILE} (the file name holds the process id): ${profiled.join('; ')}`,
  );
}
process.exit(0);
