import { createService } from './app.ts';
import { ConfigError, loadConfig } from './config/env.ts';

let config;
let service;
try {
  config = loadConfig();
  // Start-up also stops on configuration the database refutes (a secret sealed with a key not given).
  service = await createService(config);
} catch (error) {
  if (error instanceof ConfigError) {
    console.error(error.message);
    process.exit(1);
  }
  throw error;
}

const server = await service.listen();
service.logger.info({ endpoint: config.endpoint, issuer: config.issuer, port: server.address() }, 'identity service started');

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
