/**
 * `node --import tsx bench/metrics.ts`: what counting costs a token request, measured alone (the
 * machine's other load moves `npm run bench` by more than this). A request passes the request
 * histogram's middleware (route label, one observation) and one token counter increment; the
 * middleware is compared with an empty one, so only the metrics' own work is left.
 */
import type { Context } from 'koa';

import { httpMetrics } from '../lib/metrics/http.ts';
import { tokenRequests } from '../lib/metrics/metrics.ts';

const rounds = 5;
const iterations = 500_000;
const ctx = { method: 'POST', path: '/oidc/token', _matchedRoute: '/token', status: 200 } as unknown as Context;
const next = async () => {};
const empty = async (_ctx: Context, following: () => Promise<void>) => {
  await following();
};
// Typed as the empty middleware is, so both are timed the same way (Koa's type returns `any`).
const measured: (ctx: Context, following: () => Promise<void>) => Promise<void> = httpMetrics();

async function nanosecondsPer(run: () => Promise<void> | void): Promise<number> {
  for (let i = 0; i < 50_000; i++) {
    await run();
  }
  const started = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) {
    await run();
  }
  return Number(process.hrtime.bigint() - started) / iterations;
}

const results: number[] = [];
for (let round = 0; round < rounds; round++) {
  const baseline = await nanosecondsPer(() => empty(ctx, next));
  const middleware = await nanosecondsPer(() => measured(ctx, next));
  const counter = await nanosecondsPer(() => {
    tokenRequests.inc({ grant_type: 'client_credentials', result: 'success' });
  });
  results.push(middleware - baseline + counter);
}
results.sort((a, b) => a - b);
console.log(
  `metrics work per token request: median ${results[Math.floor(rounds / 2)].toFixed(0)} ns (min ${results[0].toFixed(0)}, max ${results[rounds - 1].toFixed(0)})`,
);
