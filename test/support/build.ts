import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';

import { loadConfig } from '../../lib/config/env.ts';
import { freshDatabaseUrl } from './database.ts';
import { eventually } from './eventually.ts';
import { adminClient, freePort, type ServiceClient, serviceClient } from './service.ts';

let built = false;

/**
 * Brings the build up to date with the sources under test, as `npm start` does (`npm run build`'s
 * stamp check, then a build if they changed: up to a minute on a busy machine), once per process.
 * The in-process service serves the console and sign-in pages Vite built; the process tests run dist/.
 * `npm test` builds before any test runs, so its test processes, side by side, only check the stamp.
 */
export function buildIfStale(): void {
  if (built) {
    return;
  }
  const build = spawnSync(process.execPath, ['scripts/build.mjs', '--if-stale'], { stdio: 'inherit' });
  if (build.status !== 0) {
    throw new Error('the build failed');
  }
  built = true;
}

/** The compiled entry points users run (`npm start`, `npm run cli`, `npm run migrate`, `npm run dispatcher`). */
export const builtScripts = {
  service: 'dist/lib/main.js',
  cli: 'dist/lib/cli.js',
  migrate: 'dist/lib/storage/migrate-cli.js',
  dispatcher: 'dist/lib/hooks/delivery/dispatcher-cli.js',
} as const;

/**
 * Production as users run it, with one worker: how many workers a start makes is the subject of
 * test/workers.test.ts alone, and every worker's start loads the whole service (a second of CPU on an
 * idle machine, several while the suite's other processes run beside it).
 */
export const production = { NODE_ENV: 'production', WORKERS: '1' } as const;

/**
 * Tests of the processes users run start the build: a `before` hook brings it up to date. Each of
 * their tests starts processes that load the service, so each gets two minutes before mocha calls it
 * hung, as a hang guard and not a measure: on a busy machine such a start takes ten seconds and more.
 */
export function useBuild(): void {
  before(function () {
    this.timeout(300_000);
    buildIfStale();
  });
  beforeEach(function () {
    this.currentTest?.timeout(Math.max(this.currentTest.timeout(), 120_000));
  });
}

/**
 * The build as users run it (`node dist/lib/main.js`, production mode) in a process of its own, over a
 * fresh database, reached through the same clients as the in-process service. Resolves once it is ready.
 */
export async function startBuiltService(env: Record<string, string> = {}): Promise<ServiceClient> {
  const port = await freePort();
  const settings = {
    PORT: String(port),
    ENDPOINT: `http://127.0.0.1:${port}`,
    DB_URL: await freshDatabaseUrl(),
    ...production,
    LOG_LEVEL: 'warn',
    BOOTSTRAP_ADMIN_CLIENT_ID: adminClient.id,
    BOOTSTRAP_ADMIN_CLIENT_SECRET: adminClient.secret,
    ...env,
  };
  const child = spawn(process.execPath, [builtScripts.service], {
    env: { ...process.env, ...settings },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  // Kept to explain a start that fails; never printed otherwise (a first start prints one-time secrets there).
  let errors = '';
  child.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString()));
  const exited = once(child, 'exit');
  const client = serviceClient(`http://127.0.0.1:${port}`, loadConfig(settings), async () => {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await exited;
    }
  });
  try {
    return await eventually(
      async () => {
        if (child.exitCode !== null) {
          throw new Error(`the built service stopped with code ${child.exitCode}: ${errors}`);
        }
        const ready = await client.http.get('health/ready').catch(() => undefined);
        return ready?.statusCode === 200 && client;
      },
      90_000,
      () => `the built service ready: ${errors}`,
    );
  } catch (error) {
    await client.stop();
    throw error;
  }
}
