import cluster from 'node:cluster';
import type { AddressInfo } from 'node:net';

import { createService } from './app.ts';
import { type Config, ConfigError } from './config/env.ts';
import { consoleUrl } from './console/console-app.ts';
import { signInUrl } from './experience/pages/routes.ts';
import type { StartLine, WorkerStarted } from './workers.ts';

/** A port the operator must change: one line saying so, as for a bad setting. */
function portProblem(error: unknown, port: number): ConfigError | undefined {
  switch ((error as { code?: string }).code) {
    case 'EADDRINUSE':
      return new ConfigError(`port ${port} is in use: stop what listens there or set PORT to a free port`);
    case 'EACCES':
      return new ConfigError(
        `this user may not listen on port ${port}: set PORT to one above 1023 (or allow it, e.g. CAP_NET_BIND_SERVICE)`,
      );
    default:
      return undefined;
  }
}

/**
 * One process serving the port: the whole service, or one cluster worker. Of the workers only the
 * first prepares the database and prints the one-time secrets; the primary starts the others once
 * it is ready, and writes the start line.
 */
export async function serve(config: Config): Promise<void> {
  const worker = cluster.worker;
  // Start-up also stops on a database it cannot use, and on configuration the database refutes (a
  // secret sealed with a key not given).
  const service = await createService(config, undefined, undefined, { prepare: !worker || worker.id === 1 });
  let port: number;
  try {
    port = ((await service.listen()).address() as AddressInfo).port;
  } catch (error) {
    throw portProblem(error, config.port) ?? error;
  }

  const started: StartLine = {
    issuer: config.issuer,
    console: consoleUrl(config.endpoint),
    signIn: signInUrl(config.endpoint),
    port,
  };
  if (worker) {
    worker.send({ started } satisfies WorkerStarted);
  } else {
    service.logger.info(started, 'identity service started');
  }

  let stopping = false;
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      if (stopping) {
        return;
      }
      stopping = true;
      // A cluster's primary says it once for all its workers.
      if (!worker) {
        service.logger.info({ signal }, 'shutting down');
      }
      // Requests in flight get this long to finish before the process exits anyway.
      setTimeout(() => process.exit(1), 10_000).unref();
      service.close().then(
        () => process.exit(0),
        (error: unknown) => {
          service.logger.error({ err: error }, 'shutdown failed');
          process.exit(1);
        },
      );
    });
  }
}
