import { createHash, timingSafeEqual } from 'node:crypto';
import type { Knex } from 'knex';
import type { Middleware } from 'koa';
import { Gauge, Registry } from 'prom-client';

import type { Config } from '../config/env.ts';
import { bearerToken } from '../http/api/bearer.ts';
import { RequestError } from '../http/errors.ts';
import { knexClient } from '../storage/database.ts';
import { collectProcessMetrics, registry } from './metrics.ts';

type Pool = { numUsed(): number; numFree(): number; numPendingAcquires(): number; max: number };

type OutboxRow = { due: number | string | null; scheduled: number | string | null; delivering: number | string | null };

/**
 * What this instance reads from its database when scraped: the webhook outbox (one count query over
 * the status index) and the connection pool. A scrape that cannot reach the database leaves the
 * outbox out (GET /health/ready says why).
 */
function databaseGauges(db: Knex): Registry {
  const gauges = new Registry();
  new Gauge({
    name: 'identity_webhook_outbox_deliveries',
    help: 'Webhook deliveries not finished, by state: due (waiting for a dispatcher), scheduled (waiting for a retry), delivering',
    labelNames: ['state'],
    registers: [gauges],
    async collect() {
      const now = Date.now();
      try {
        const row = await db('hook_deliveries')
          .whereIn('status', ['pending', 'delivering'])
          .first<OutboxRow>(
            db.raw("sum(case when status = 'pending' and next_attempt_at <= ? then 1 else 0 end) as due", [now]),
            db.raw("sum(case when status = 'pending' and next_attempt_at > ? then 1 else 0 end) as scheduled", [now]),
            db.raw("sum(case when status = 'delivering' then 1 else 0 end) as delivering"),
          );
        for (const state of ['due', 'scheduled', 'delivering'] as const) {
          this.set({ state }, Number(row[state] ?? 0));
        }
      } catch {
        this.reset();
      }
    },
  });
  new Gauge({
    name: 'identity_db_pool_connections',
    help: 'Database connections of this instance: used, free, pending (requests waiting for one), max',
    labelNames: ['state'],
    registers: [gauges],
    collect() {
      const pool = knexClient(db).pool as Pool | undefined;
      if (pool) {
        this.set({ state: 'used' }, pool.numUsed());
        this.set({ state: 'free' }, pool.numFree());
        this.set({ state: 'pending' }, pool.numPendingAcquires());
        this.set({ state: 'max' }, pool.max);
      }
    },
  });
  return gauges;
}

/** Compares in constant time: the digests have one length whatever was sent. */
const sameToken = (given: string, expected: string) =>
  timingSafeEqual(createHash('sha256').update(given).digest(), createHash('sha256').update(expected).digest());

/** Why a scrape is refused (the 401 a bad Authorization header gets), or nothing when its token is right. */
function refusal(header: string, token: string): RequestError | undefined {
  try {
    return sameToken(bearerToken(header), token)
      ? undefined
      : new RequestError('auth.unauthorized', { reason: 'Unauthorized: this is not the metrics token.' });
  } catch (error) {
    return error as RequestError;
  }
}

/**
 * `GET /metrics` in Prometheus's text format, where `config.metrics.enabled` (lib/app.ts): with
 * METRICS_TOKEN only for `Authorization: Bearer <token>`, without it open (development only).
 */
export function metricsEndpoint(config: Config, db: Knex): Middleware {
  const { token } = config.metrics;
  collectProcessMetrics();
  const gauges = databaseGauges(db);
  return async (ctx, next) => {
    if (ctx.path !== '/metrics' || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) {
      await next();
      return;
    }
    const refused = token === undefined ? undefined : refusal(ctx.get('authorization'), token);
    if (refused) {
      ctx.set('WWW-Authenticate', 'Bearer realm="metrics"');
      ctx.status = refused.status;
      ctx.body = { code: refused.code, message: refused.message };
      return;
    }
    const [counted, read] = await Promise.all([registry.metrics(), gauges.metrics()]);
    ctx.type = registry.contentType;
    ctx.set('Cache-Control', 'no-store');
    ctx.body = `${counted}\n${read}`;
  };
}
