import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** What the thread's troubles are reported to (the service's logger). */
type Reports = {
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
};

/**
 * How far the write-ahead log of an SQLite database may grow before the connection that writes
 * copies it into the database file itself, in 4 KiB pages (SQLite's default: 1,000). The copy,
 * an fsync included, runs inside the commit that crossed the line: under a load of token requests
 * that was a 3-8 ms stall every second or so, on the thread that serves requests. A service
 * copies it on a thread of its own long before (below); the line only bounds the log when no
 * service runs (a CLI alone) or that thread fell behind.
 */
export const walAutocheckpointPages = 16_000;

/** How often the service's own thread copies the log into the database file. */
const checkpointIntervalMs = 200;

export type WalCheckpoints = { stop(): Promise<void> };

/**
 * The thread: a connection of its own that copies the log into the database file. PASSIVE waits for
 * nobody: it copies what no reader still needs and leaves the rest for the next round. Plain
 * JavaScript run as it is, because a worker thread gets neither the build's output path nor the
 * development loader (tsx) of the process that starts it.
 */
const threadSource = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const connection = new Database(workerData.filename, { fileMustExist: true });
const checkpoint = connection.prepare('pragma wal_checkpoint(PASSIVE)');
const timer = setInterval(() => {
  try {
    checkpoint.run();
  } catch (error) {
    parentPort.postMessage({ failed: error instanceof Error ? error.message : String(error) });
  }
}, workerData.intervalMs);
parentPort.once('message', () => {
  clearInterval(timer);
  connection.close();
  parentPort.close();
});
`;

const driver = createRequire(import.meta.url).resolve('better-sqlite3');

/** Starts the checkpoints of the SQLite database in `filename` on a worker thread of their own. */
export function startWalCheckpoints(filename: string, logger: Reports): WalCheckpoints {
  const worker = new Worker(threadSource, {
    eval: true,
    execArgv: [],
    workerData: { driver, filename, intervalMs: checkpointIntervalMs },
  });
  // Reported once: a checkpoint that fails fails every round alike (a busy one passes the next).
  let reported = false;
  worker.on('message', (message: { failed?: string }) => {
    if (message.failed && !reported) {
      reported = true;
      logger.warn({ reason: message.failed }, 'SQLite checkpoint failed; the writing connection checkpoints instead');
    }
  });
  worker.on('error', (error) => logger.error({ err: error }, 'SQLite checkpoint thread failed'));
  worker.unref();
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  return {
    async stop() {
      // Held until the thread closed its connection, even when nothing else keeps the process up.
      worker.ref();
      worker.postMessage('stop');
      await exited;
    },
  };
}
