import type { AddressInfo } from 'node:net';

import { createService, type Service } from './app.ts';
import { ConfigError, loadConfig, type Config } from './config/env.ts';
import { consoleUrl } from './console/console-app.ts';
import { signInUrl } from './experience/pages/routes.ts';

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

let config: Config;
let service: Service;
let port: number;
try {
  config = loadConfig();
  // Start-up also stops on a database it cannot use, and on configuration the database refutes (a
  // secret sealed with a key not given).
  service = await createService(config);
  try {
    port = ((await service.listen()).address() as AddressInfo).port;
  } catch (error) {
    throw portProblem(error, config.port) ?? error;
  }
} catch (error) {
  if (error instanceof ConfigError) {
    console.error(error.message);
    process.exit(1);
  }
  throw error;
}

service.logger.info(
  { issuer: config.issuer, console: consoleUrl(config.endpoint), signIn: signInUrl(config.endpoint), port },
  'identity service started',
);

let stopping = false;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    if (stopping) {
      return;
    }
    stopping = true;
    service.logger.info({ signal }, 'shutting down');
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
