import cluster from 'node:cluster';

import { ConfigError, loadConfig } from './config/env.ts';
import { runPrimary } from './workers.ts';

// `npm start`: one process serving the port in development, or a cluster primary that serves nothing
// itself and so loads none of the service (lib/workers.ts): always in production, where it replaces a
// worker that dies and starts the workers with the memory settings of `workerRuntime`; elsewhere
// when WORKERS is above 1.
try {
  const config = loadConfig();
  if (cluster.isPrimary && (config.workers > 1 || config.production)) {
    runPrimary(config);
  } else {
    await (await import('./serve.ts')).serve(config);
  }
} catch (error) {
  // What the operator fixes is one line (exit 1); anything else is a defect and shows its stack.
  if (error instanceof ConfigError) {
    console.error(error.message);
    process.exit(1);
  }
  throw error;
}
