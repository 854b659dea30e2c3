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
  const build = spawnSync(process.execPath, ['node_modules/vite/bin/vite.js', 'build', app, '--logLevel', 'warn'], { stdio: 'inherit' });
  if (build.status !== 0) {
    throw new Error(`the ${app} build failed`);
  }
}
