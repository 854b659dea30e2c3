import { spawnSync } from 'node:child_process';

const built = new Set<string>();

/**
 * The service serves what Vite built when it started: builds a browser application (`console`,
 * `sign-in`) from the sources under test, once per test run (under a second each).
 */
export function buildOnce(app: 'console' | 'sign-in'): void {
  if (built.has(app)) {
    return;
  }
  built.add(app);
  const build = spawnSync(process.execPath, ['node_modules/vite/bin/vite.js', 'build', app, '--logLevel', 'warn'], {
    stdio: 'inherit',
  });
  if (build.status !== 0) {
    throw new Error(`the ${app} build failed`);
  }
}

/** The compiled entry points users run (`npm start`, `npm run cli`, `npm run migrate`, `npm run dispatcher`). */
export const builtScripts = {
  service: 'dist/lib/main.js',
  cli: 'dist/lib/cli.js',
  migrate: 'dist/lib/storage/migrate-cli.js',
  dispatcher: 'dist/lib/hooks/dispatcher-cli.js',
} as const;

/**
 * Tests of the processes users run start the build, as `npm start` does: a `before` hook brings
 * dist/ up to date with the sources under test (`npm run build`'s stamp check, then a build if they
 * changed: up to a minute on a busy machine).
 */
export function useBuild(): void {
  before(function () {
    this.timeout(300_000);
    if (built.has('service')) {
      return;
    }
    built.add('service');
    const build = spawnSync(process.execPath, ['scripts/build.mjs', '--if-stale'], { stdio: 'inherit' });
    if (build.status !== 0) {
      throw new Error('the build failed');
    }
  });
}
