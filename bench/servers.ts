/**
 * The servers under load, each a process of its own: how they start (optionally pinned to CPUs with
 * `taskset`), when they answer, how much CPU their process tree used, how they stop.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readdirSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { got } from 'got';

/**
 * How the service starts: the compiled build when there is one (`npm run build`), else the
 * TypeScript source through tsx. A build older than the source would measure yesterday's code, so
 * that stops the bench instead.
 */
export const serviceEntry: string[] = existsSync('dist/lib/main.js')
  ? ['dist/lib/main.js']
  : ['--import', 'tsx', 'lib/main.ts'];
export const serviceCommand = `node ${serviceEntry.join(' ')}`;

export function assertBuildCurrent(): void {
  if (serviceEntry[0] !== 'dist/lib/main.js') {
    return;
  }
  const built = statSync('dist/lib/main.js').mtimeMs;
  for (const folder of ['lib', 'config', 'migrations']) {
    for (const file of readdirSync(folder, { recursive: true, encoding: 'utf8' })) {
      if (file.endsWith('.ts') && statSync(join(folder, file)).mtimeMs > built) {
        throw new Error(`${join(folder, file)} is newer than dist/lib/main.js: run \`npm run build\` first`);
      }
    }
  }
}

/** The baseline: bare oidc-provider (bench/baseline.ts), run from source like the rest of the bench. */
export const baselineEntry = ['--import', 'tsx', 'bench/baseline.ts'];

export type Server = {
  port: number;
  pid: number;
  /** CPU seconds (user + system) used so far by the server's Node processes (cluster workers included). */
  cpuSeconds(): number;
  /** The server's Node processes (a cluster's primary first, then its workers). */
  processIds(): number[];
  stop(): Promise<void>;
};

const started = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of started) {
    child.kill('SIGKILL');
  }
});

/**
 * Starts `node <args>` with `env` (on `cpus` via taskset when given) and waits until its port answers
 * HTTP. Its stdout, where a production deployment's logs go, is drained into /dev/null.
 */
export async function startServer(
  args: string[],
  port: number,
  env: Record<string, string>,
  cpus?: string,
): Promise<Server> {
  // BENCH_PROFILE=<dir> writes a V8 CPU profile of each server process there (cluster workers inherit the flag).
  const profile = process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : [];
  const command = [process.execPath, ...profile, ...args];
  const child = spawn(cpus ? 'taskset' : command[0], cpus ? ['-c', cpus, ...command] : command.slice(1), {
    env: { ...process.env, NODE_ENV: 'production', LOG_LEVEL: 'info', PORT: String(port), ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  started.add(child);
  // stderr is drained too (it carries the one-time secrets a start prints); its tail explains a failed start.
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (text: string) => {
    stderr = (stderr + text).slice(-4000);
  });
  const pid = child.pid;
  if (pid === undefined) {
    throw new Error(`${command.join(' ')} could not be spawned`);
  }
  const since = Date.now();
  for (;;) {
    try {
      // The service binds its port before it has made the bootstrap administrator, and says 503 on
      // /health/ready until then (a token request would meet 401); the bare provider answers 404.
      const { statusCode } = await got(`http://127.0.0.1:${port}/health/ready`, {
        retry: { limit: 0 },
        throwHttpErrors: false,
        followRedirect: false,
      });
      if (statusCode === 503) {
        throw new Error('not ready yet');
      }
      break;
    } catch (error) {
      if (Date.now() - since > 60_000 || child.exitCode !== null) {
        throw new Error(`${args.join(' ')} did not start:\n${stderr}`, { cause: error });
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  return {
    port,
    pid,
    cpuSeconds: () => nodeProcesses(pid).reduce((sum, id) => sum + cpuTicks(id), 0) / clockTicks,
    processIds: () => nodeProcesses(pid),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = once(child, 'exit');
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
        await exited;
        clearTimeout(timer);
      }
      started.delete(child);
    },
  };
}

const clockTicks = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** user + system clock ticks of one process (0 once it is gone, or off Linux). */
function cpuTicks(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces): state is the 3rd field, utime the 14th, stime the 15th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return 0;
  }
}

/**
 * The process and its live descendants that run Node: not tsx's esbuild helper, which a build
 * deployed to production would not have.
 */
function nodeProcesses(pid: number): number[] {
  return processTree(pid).filter((id) => executable(id) === executable(pid));
}

function executable(pid: number): string | undefined {
  try {
    return readlinkSync(`/proc/${pid}/exe`);
  } catch {
    return undefined;
  }
}

/** The process and its live descendants. */
function processTree(pid: number): number[] {
  const tree = [pid];
  for (let index = 0; index < tree.length; index++) {
    const id = tree[index];
    try {
      for (const task of readdirSync(`/proc/${id}/task`)) {
        const children = readFileSync(`/proc/${id}/task/${task}/children`, 'utf8').trim();
        if (children) {
          tree.push(...children.split(' ').map(Number));
        }
      }
    } catch {
      // gone, or not Linux
    }
  }
  return tree;
}
