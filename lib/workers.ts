import cluster, { type Worker } from 'node:cluster';

import type { Config } from './config/env.ts';
import { createLogger } from './http/logger.ts';

/** What the start line names: the addresses an operator opens first. */
export type StartLine = { issuer: string; console: string; signIn: string; port: number };

/**
 * What a worker tells the primary once its port is bound and its start-up is done. The primary
 * writes the start line from it: it loads none of the service, so as to stay small.
 */
export type WorkerStarted = { started: StartLine };

/** Each worker has 10 s to finish its requests (main.ts); past this the primary stops waiting. */
const stopBudgetMs = 12_000;
/** A worker that served this long died of something other than its start: replace it at once. */
const healthyAfterMs = 60_000;
const firstBackoffMs = 1000;
const longestBackoffMs = 30_000;

/**
 * V8's old-space limit of a worker, MB, unless the operator set `--max-old-space-size` (NODE_OPTIONS
 * or node's own arguments). Node's default scales with the machine (about 4 GB on a large one), and V8
 * lets the heap grow towards it before it collects hard: under 500 connections a worker held 300 MB
 * for 40 MB of live objects. With this limit it held 173 MB, at the same throughput
 * (docs/benchmarks.md, "Memory under load").
 */
const workerHeapMb = 512;

/**
 * How far the old space may grow past what the last full collection kept, percent, unless the
 * operator set `--heap-growing-percent` (an argument to node itself: NODE_OPTIONS may not carry
 * it). Under a limit below 2 GB V8 lets it grow by only 30-60%, and the service keeps about 40 MB
 * alive (its loaded code most of it): under a steady load of token requests that was a full
 * collection every 0.4 s, each pausing every request in flight for 3-13 ms, and a p99 1.7 times the
 * bare provider's. Growing by 125%, a worker collects a third as often and its p99 comes within
 * 1.4 times the bare provider's, while its peak under 500 connections stays near 240 MB
 * (docs/benchmarks.md, "Memory under load").
 */
const workerHeapGrowingPercent = 125;

/**
 * glibc keeps freed blocks of up to 32 MB in its heap once it has freed one that size (its mmap
 * threshold adapts), so the 19 MiB an Argon2 hash takes stays resident after every sign-in: a fixed
 * threshold returns such blocks to the system when they are freed.
 */
const mallocMmapThreshold = '131072';

/** What each worker starts with: the operator's settings, and ours where they set none. */
export function workerRuntime(
  execArgv: readonly string[],
  env: NodeJS.ProcessEnv,
): { execArgv: string[]; env: Record<string, string> } {
  const given = [...execArgv, ...(env.NODE_OPTIONS ?? '').split(/\s+/)];
  const unlessGiven = (flag: string, value: number) =>
    given.some((arg) => new RegExp(`^--${flag.replaceAll('-', '[-_]')}\\b`).test(arg)) ? [] : [`--${flag}=${value}`];
  return {
    execArgv: [
      ...execArgv,
      ...unlessGiven('max-old-space-size', workerHeapMb),
      ...unlessGiven('heap-growing-percent', workerHeapGrowingPercent),
    ],
    env: !env.MALLOC_MMAP_THRESHOLD_ ? { MALLOC_MMAP_THRESHOLD_: mallocMmapThreshold } : {},
  };
}

/**
 * The cluster's primary (always in production, else when `WORKERS` is above 1): it serves nothing itself. It starts one worker, which
 * migrates, makes the keys and the bootstrap administrator and prints the one-time secrets once its
 * port is bound, as a single process would; only when that one is ready does it start the others,
 * which skip those steps, so no two processes race over them and a start that fails (a port in use,
 * a database it cannot reach) fails in one worker, which prints one line. Later, a worker that dies
 * is replaced, after a pause that doubles while replacements keep dying young; SIGTERM or SIGINT is
 * passed to every worker, and the primary exits once they all have.
 */
export function runPrimary(config: Config): void {
  const logger = createLogger(config);
  const forkedAt = new Map<Worker, number>();
  const restarts = new Set<NodeJS.Timeout>();
  let phase: 'starting' | 'running' | 'stopping' = 'starting';
  let listening = 0;
  let backoffMs = 0;
  let failed = false;

  const runtime = workerRuntime(process.execArgv, process.env);
  cluster.setupPrimary({ execArgv: runtime.execArgv });
  const fork = () => forkedAt.set(cluster.fork(runtime.env), Date.now());

  const stop = () => {
    phase = 'stopping';
    for (const timer of restarts) {
      clearTimeout(timer);
    }
    for (const worker of forkedAt.keys()) {
      worker.process.kill('SIGTERM');
    }
    setTimeout(() => {
      for (const worker of forkedAt.keys()) {
        worker.process.kill('SIGKILL');
      }
      process.exit(1);
    }, stopBudgetMs).unref();
    exitWhenAllGone();
  };

  const exitWhenAllGone = () => {
    if (forkedAt.size === 0) {
      logger.flush();
      process.exit(failed ? 1 : 0);
    }
  };

  cluster.on('message', (worker, message: Partial<WorkerStarted>) => {
    if (!message.started) {
      return;
    }
    if (phase === 'running') {
      logger.info({ pid: worker.process.pid }, 'worker started');
      return;
    }
    if (phase !== 'starting') {
      return;
    }
    listening += 1;
    if (listening === 1) {
      for (let count = 1; count < config.workers; count++) {
        fork();
      }
    }
    if (listening === config.workers) {
      phase = 'running';
      logger.info({ ...message.started, workers: config.workers }, 'identity service started');
    }
  });

  cluster.on('exit', (worker, code, signal) => {
    const lived = Date.now() - (forkedAt.get(worker) ?? 0);
    forkedAt.delete(worker);
    if (phase === 'running') {
      backoffMs =
        lived >= healthyAfterMs ? firstBackoffMs : Math.min(Math.max(backoffMs * 2, firstBackoffMs), longestBackoffMs);
      logger.error(
        { pid: worker.process.pid, code, signal, restartInMs: backoffMs },
        'a worker stopped unexpectedly: starting another',
      );
      const timer = setTimeout(() => {
        restarts.delete(timer);
        fork();
      }, backoffMs);
      restarts.add(timer);
      return;
    }
    // Stopping, a worker ends with 0, or by the signal passed on before it could take it over.
    if (code !== 0 && signal !== 'SIGTERM' && signal !== 'SIGINT') {
      failed = true;
    }
    if (phase === 'starting') {
      // The worker said why (one line, or a defect's stack): the others are stopped without a word.
      failed = true;
      stop();
      return;
    }
    exitWhenAllGone();
  });

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      if (phase !== 'stopping') {
        logger.info({ signal }, 'shutting down');
        stop();
      }
    });
  }

  fork();
}
