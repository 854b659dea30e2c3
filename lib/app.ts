import { STATUS_CODES, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';

import Koa from 'koa';

import { purgeExpiredVerifications } from './account/verifications.ts';
import { AuditLog } from './audit/audit-log.ts';
import type { Config } from './config/env.ts';
import { syncConsoleApplication } from './console/console-app.ts';
import { consolePages } from './console/pages.ts';
import { pageRoutes } from './experience/pages/routes.ts';
import { Dispatcher } from './hooks/dispatcher.ts';
import { purgeExpiredStates } from './experience/state.ts';
import { createLogger, requestLogger, type Logger } from './http/logger.ts';
import { ensureBootstrapAdmin, syncManagementApiIndicator } from './management/bootstrap.ts';
import { useApi } from './management/api.ts';
import { purgeExpiredModels } from './oidc/adapter.ts';
import { ensureKeys, pruneRetiredKeys } from './oidc/keys.ts';
import { createOidcService } from './oidc/mount.ts';
import { openDatabase } from './storage/database.ts';
import { migrateToLatest } from './storage/migrate.ts';
import { SharedCache } from './storage/shared-cache.ts';

const housekeepingInterval = 10 * 60 * 1000;

/** What Node answers itself, before any route (a malformed request, headers over its 16 KB), by parser error code. */
const clientErrors: Record<string, { status: number; code: string; message: string }> = {
  HPE_HEADER_OVERFLOW: { status: 431, code: 'request.header_fields_too_large', message: 'The request headers are larger than 16 KB.' },
  HPE_CHUNK_EXTENSIONS_OVERFLOW: { status: 413, code: 'request.entity_too_large', message: 'The chunk extensions are too large.' },
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, code: 'request.timeout', message: 'The request took too long to arrive.' },
};
const malformed = { status: 400, code: 'request.malformed', message: 'The request is not valid HTTP.' };

/**
 * Node's own answer to a request it could not parse is an empty 400 or 431; ours is a JSON error like
 * every other. The request's bytes are never logged (they may hold credentials).
 */
function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
  const response = (socket as Duplex & { _httpMessage?: ServerResponse })._httpMessage;
  if (error.code === 'ECONNRESET' || !socket.writable || response?.headersSent) {
    socket.destroy();
    return;
  }
  const { status, code, message } = clientErrors[error.code ?? ''] ?? malformed;
  const body = JSON.stringify({ code, message });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

export type Service = {
  app: Koa;
  logger: Logger;
  listen(port?: number): Promise<Server>;
  close(): Promise<void>;
};

/** Opens the database, brings it up to date, and assembles the HTTP service. */
export async function createService(config: Config, logger: Logger = createLogger(config)): Promise<Service> {
  const db = openDatabase(config.dbUrl);
  try {
    await migrateToLatest(db);
    await ensureKeys(db);
    await syncManagementApiIndicator(db, config.managementApiResource);
    await syncConsoleApplication(db, config.endpoint);
    await ensureBootstrapAdmin(db, config, logger);
  } catch (error) {
    await db.destroy();
    throw error;
  }
  const cache = new SharedCache(db);
  await cache.sync();

  const app = new Koa({ proxy: config.trustProxy });
  app.on('error', (error) => logger.error({ err: error }, 'unhandled error'));
  app.use(requestLogger(logger));
  app.use(async (_ctx, next) => {
    await cache.sync();
    await next();
  });
  const audit = new AuditLog(db, logger);
  const oidc = createOidcService(app, { config, db, cache, logger, audit });
  app.use(oidc.routes);
  app.use(pageRoutes());
  app.use(consolePages());
  useApi(app, { config, db, cache, logger, oidc, audit });

  // Webhook deliveries run in every instance; more can run alone (`npm run dispatcher`).
  // Stops within 5 s, inside main.ts's 10 s shutdown budget; what it cuts off is sent again later.
  const dispatcher = new Dispatcher({ db, config, logger, options: { stopTimeoutMs: 5000 } });
  dispatcher.start();

  const housekeeping = setInterval(() => {
    Promise.all([purgeExpiredModels(db), pruneRetiredKeys(db), purgeExpiredStates(db), purgeExpiredVerifications(db)]).catch((error: unknown) =>
      logger.error({ err: error }, 'housekeeping failed'),
    );
  }, housekeepingInterval);
  housekeeping.unref();

  let server: Server | undefined;
  return {
    app,
    logger,
    async listen(port = config.port) {
      const listening = app.listen(port);
      listening.on('clientError', answerClientError);
      server = listening;
      await new Promise<void>((resolve, reject) => {
        listening.once('listening', resolve);
        listening.once('error', reject);
      });
      return listening;
    },
    /** Stops accepting connections, lets requests in flight finish, then closes the pool. */
    async close() {
      clearInterval(housekeeping);
      await dispatcher.stop();
      if (server) {
        const closing = new Promise<void>((resolve) => server?.close(() => resolve()));
        server.closeIdleConnections();
        await closing;
      }
      await audit.flush();
      await db.destroy();
      logger.flush();
    },
  };
}
