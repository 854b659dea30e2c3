/**
 * `npm run bench:start`: how long the service takes to start and how much memory it holds idle, run
 * from the build (`node dist/lib/main.js`, what `npm start` runs) and from the sources through tsx
 * (what it ran before there was a build). Each start is a restart on a migrated SQLite database (the
 * common case), in production with WORKERS=1 (a primary and one worker); the time is from spawning the
 * primary to the first answer on /api/status, the memory the resident set (VmRSS) of the worker and of
 * the primary after 5 s idle. BENCH_RUNS=5 by default; medians are printed.
 */
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { got } from 'got';

import { freshDatabaseUrl } from '../test/support/database.ts';
import { freePort } from '../test/support/service.ts';

const runs = Number(process.env.BENCH_RUNS ?? 5);
const idleMs = 5000;

const variants = [
  { name: 'build: node dist/lib/main.js', args: ['dist/lib/main.js'] },
  { name: 'sources: node --import tsx lib/main.ts', args: ['--import', 'tsx', 'lib/main.ts'] },
];

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

const rssMbOf = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024;

async function startOnce(
  args: string[],
  dbUrl: string,
): Promise<{ startMs: number; rssMb: number; primaryMb: number }> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, args, {
    env: { ...process.env, NODE_ENV: 'production', LOG_LEVEL: 'warn', PORT: String(port), DB_URL: dbUrl, WORKERS: '1' },
    stdio: 'ignore',
  });
  try {
    for (;;) {
      const answered = await got(`http://127.0.0.1:${port}/api/status`, {
        retry: { limit: 0 },
        throwHttpErrors: false,
      }).then(
        () => true,
        () => false,
      );
      if (answered) {
        break;
      }
      if (child.exitCode !== null) {
        throw new Error(`${args.join(' ')} exited with ${child.exitCode}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const startMs = performance.now() - started;
    await new Promise((resolve) => setTimeout(resolve, idleMs));
    const primary = child.pid ?? 0;
    const worker = Number(readFileSync(`/proc/${primary}/task/${primary}/children`, 'utf8').trim().split(' ')[0]);
    return { startMs, rssMb: rssMbOf(worker), primaryMb: rssMbOf(primary) };
  } finally {
    child.kill('SIGTERM');
    await once(child, 'exit');
  }
}

if (spawnSync(process.execPath, ['scripts/build.mjs', '--if-stale'], { stdio: 'inherit' }).status !== 0) {
  throw new Error('the build failed');
}
console.log(`${runs} restarts each on a migrated SQLite database, Node ${process.version}; medians (min–max)`);
console.log('| how it runs | start, ms | idle RSS of the worker, MB | of the primary, MB |\n|---|---:|---:|---:|');
for (const variant of variants) {
  const dbUrl = await freshDatabaseUrl();
  await startOnce(variant.args, dbUrl); // the first start migrates and makes keys: not counted
  const results = [];
  for (let run = 0; run < runs; run++) {
    results.push(await startOnce(variant.args, dbUrl));
  }
  const starts = results.map((result) => result.startMs);
  const figures = (values: number[]) =>
    `${median(values).toFixed(0)} (${Math.min(...values).toFixed(0)}–${Math.max(...values).toFixed(0)})`;
  console.log(
    `| ${variant.name} | ${figures(starts)} | ${figures(results.map((result) => result.rssMb))} | ${figures(results.map((result) => result.primaryMb))} |`,
  );
}
