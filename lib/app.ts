import { createServer, type Server } from 'node:http';
import Koa from 'koa';

import { useApi } from './api.ts';
import { AuditLog } from './audit/audit-log.ts';
import type { Config } from './config/env.ts';
import { consolePages } from './console/pages.ts';
import type { ExperienceContext } from './experience/context.ts';
import { brandingStylesheet } from './experience/pages/branding-css.ts';
import { faviconRoute } from './experience/pages/favicon.ts';
import { pageRoutes } from './experience/pages/routes.ts';
import { experienceSessions } from './experience/session.ts';
import { DatabaseOutage } from './health/outage.ts';
import { ReadinessCheck } from './health/readiness.ts';
import { healthRoutes } from './health/routes.ts';
import { Dispatcher } from './hooks/delivery/dispatcher.ts';
import { JobRunner } from './hooks/jobs/job-runner.ts';
import { answerMalformedRequest } from './http/client-error.ts';
import { createLogger, type Logger, type NoticeStream, requestLogger } from './http/logger.ts';
import { countRequestsAsHttps } from './http/pages/secure-cookies.ts';
import { createConnectors } from './messages/index.ts';
import { metricsEndpoint } from './metrics/endpoint.ts';
import { httpMetrics } from './metrics/http.ts';
import { createOidcService } from './oidc/mount.ts';
import { signOutScript } from './oidc/pages/sign-out-script.ts';
import {
  afterListening,
  housekeepingInterval,
  housekeepingTasks,
  logConfigWarnings,
  onDatabase,
  type StartingService,
} from './start-up.ts';
import { connectDatabase, sqliteFile } from './storage/database.ts';
import { SharedCache } from './storage/shared-cache.ts';
import { startWalCheckpoints } from './storage/wal-checkpoints.ts';

/** Asked every few seconds by probes and scrapers: logged at debug, not info. */
const probePaths = new Set(['/health/live', '/health/ready', '/metrics']);

export type Service = {
  app: Koa;
  logger: Logger;
  listen(port?: number): Promise<Server>;
  close(): Promise<void>;
};

/**
 * Opens the database, brings it up to date, and assembles the HTTP service. Secrets shown once to
 * the operator (generated credentials, the console's setup token) go to `notices`, not the log,
 * once `listen` holds its port: a start that fails there has made and shown none.
 *
 * `prepare: false` (cluster workers after the first, lib/workers.ts) skips what a start does once
 * for the database: the first worker has done it, and only one process must print the secrets.
 */
export async function createService(
  config: Config,
  logger: Logger = createLogger(config),
  notices: NoticeStream = process.stderr,
  { prepare = true }: { prepare?: boolean } = {},
): Promise<Service> {
  const db = await connectDatabase(config, (reason) => logger.warn({ reason }, 'database not reachable yet, retrying'));
  const starting: StartingService = { config, db, logger, notices };
  // Asks whether a database that is gone is back by the read every request makes first.
  const outage = new DatabaseOutage(logger, () => cache.sync());
  let readiness: ReadinessCheck;
  try {
    for (const step of prepare ? onDatabase : []) {
      await step(starting);
    }
    readiness = await ReadinessCheck.create(db, config.dbUrl, logger, outage);
  } catch (error) {
    await db.destroy();
    throw error;
  }
  if (prepare) {
    logConfigWarnings(starting);
  }
  const cache = new SharedCache(db);
  await cache.sync();
  // The OpenTelemetry SDK is loaded only when tracing is configured: otherwise it costs nothing.
  const tracing = config.tracing ? (await import('./tracing/sdk.ts')).startTracing(config.tracing, db) : undefined;

  // Behind the proxy, a client's address is the one the proxy appended to X-Forwarded-For: entries
  // before it are whatever the client sent (the client-auth throttle counts per address).
  const app = new Koa({ proxy: config.trustProxy, maxIpsCount: 1 });
  countRequestsAsHttps(app, config.endpoint);
  app.on('error', (error) => logger.error({ err: error }, 'unhandled error'));
  if (tracing) {
    app.use(tracing.middleware);
  }
  // Off in production without METRICS_TOKEN: the counts tell an outsider how the service is used.
  if (config.metrics.enabled) {
    app.use(httpMetrics());
  }
  app.use(requestLogger(logger, probePaths));
  app.use(healthRoutes(readiness));
  if (config.metrics.enabled) {
    app.use(metricsEndpoint(config, db));
  }
  // Every request but the probes and metrics above: while the database is gone, a JSON 503 at once.
  app.use(outage.gate(() => cache.sync()));
  const audit = new AuditLog(db, logger, undefined, outage);
  // Built once and handed to every domain's routes (the provider needs all but itself and its sessions).
  const services = { config, db, cache, logger, audit, messages: createConnectors(config, db, cache) };
  const oidc = createOidcService(app, services);
  const context: ExperienceContext = { ...services, oidc, sessions: experienceSessions(db, oidc) };
  app.use(oidc.routes);
  app.use(faviconRoute(services));
  app.use(signOutScript());
  app.use(pageRoutes(context));
  app.use(brandingStylesheet(services));
  app.use(consolePages(services));
  useApi(app, context);

  // Webhook deliveries run in every instance; more can run alone (`npm run dispatcher`).
  // Stops within 5 s, inside main.ts's 10 s shutdown budget; what it cuts off is sent again later.
  const dispatcher = new Dispatcher({
    db,
    config,
    logger,
    outage,
    notices: { audit, email: services.messages.email },
    options: { stopTimeoutMs: 5000 },
  });
  dispatcher.start();
  // Recover and replay jobs, in every instance: a job is held by one at a time.
  const jobRunner = new JobRunner({ db, logger, outage });
  jobRunner.start();

  const housekeeping = setInterval(() => {
    Promise.all(housekeepingTasks.map((task) => task(starting))).catch((error: unknown) =>
      logger.error({ err: error }, 'housekeeping failed'),
    );
  }, housekeepingInterval);
  housekeeping.unref();
  // Last, so that a start that fails before leaves no thread behind.
  const sqlite = sqliteFile(config.dbUrl);
  const checkpoints = sqlite && sqlite !== ':memory:' ? startWalCheckpoints(sqlite, logger) : undefined;

  let server: Server | undefined;
  return {
    app,
    logger,
    async listen(port = config.port) {
      // A request's headers and body must arrive within the limit, or a slow sender (a body trickled a
      // byte at a time) would hold a connection and its memory for as long as it likes: 408
      // request.timeout through the clientError listener, then the connection is closed. Node counts
      // from a request's first byte, so an idle keep-alive connection is not cut; it checks every second.
      const handle = app.callback();
      const listening = createServer(
        {
          requestTimeout: config.requestTimeoutMs,
          headersTimeout: config.requestTimeoutMs,
          connectionsCheckingInterval: 1000,
        },
        (request, response) => void handle(request, response),
      ).listen(port);
      listening.on('clientError', answerMalformedRequest(logger));
      // Longer than a load balancer's or a client's idle timeout (60 s at AWS and GCP): the server must
      // not close an idle keep-alive connection while the other side may be sending on it.
      listening.keepAliveTimeout = 65_000;
      server = listening;
      await new Promise<void>((resolve, reject) => {
        listening.once('listening', resolve);
        listening.once('error', reject);
      });
      for (const step of prepare ? afterListening : []) {
        await step(starting);
      }
      // Until now a request could find what the steps make missing: not ready.
      readiness.started();
      return listening;
    },
    /** Stops accepting connections, lets requests in flight finish, then closes the pool. */
    async close() {
      readiness.drain();
      outage.close();
      clearInterval(housekeeping);
      await Promise.all([dispatcher.stop(), jobRunner.stop()]);
      if (server) {
        const closing = new Promise<void>((resolve) => server?.close(() => resolve()));
        server.closeIdleConnections();
        await closing;
      }
      await audit.flush();
      cache.close();
      await checkpoints?.stop();
      await db.destroy();
      await tracing?.shutdown();
      logger.flush();
    },
  };
}
