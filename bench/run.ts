/**
 * `npm run bench` (also `npm run bench:token-exchange`): token-endpoint throughput and latency of the
 * service — client credentials and token exchange — beside a bare oidc-provider baseline, each server
 * in its own process on this machine, measured with autocannon one after the other.
 *
 *   BENCH_DURATION=10 BENCH_CONNECTIONS=32 BENCH_DB=sqlite|mysql npm run bench
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';

import autocannon from 'autocannon';
import { got } from 'got';

import { freePort } from '../test/support/service.ts';
import { freshDatabaseUrl } from '../test/support/database.ts';
import { baselineClient, baselineResource } from './fixtures.ts';
import { signInForToken } from './flow.ts';

const duration = Number(process.env.BENCH_DURATION ?? 10);
/** BENCH_ONLY=token-exchange (or client-credentials, baseline) measures one scenario, e.g. to profile it. */
const only = process.env.BENCH_ONLY;
const wanted = (name: string) => !only || only === name;
const connections = Number(process.env.BENCH_CONNECTIONS ?? 32);
const database = process.env.BENCH_DB === 'mysql' ? 'mysql' : 'sqlite';

/** Starts a server process and waits until its port answers HTTP. Its logs go nowhere, as a production pipe would. */
async function startProcess(script: string, port: number, env: Record<string, string> = {}): Promise<ChildProcess> {
  // BENCH_PROFILE=<dir> writes a CPU profile of each server process there (for `node --cpu-prof` readers).
  const profile = process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : [];
  const child = spawn(process.execPath, [...profile, '--import', 'tsx', script], {
    env: { ...process.env, NODE_ENV: 'production', LOG_LEVEL: 'info', PORT: String(port), ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const started = Date.now();
  for (;;) {
    try {
      await got(`http://127.0.0.1:${port}/`, { retry: { limit: 0 }, throwHttpErrors: false });
      return child;
    } catch (error) {
      if (Date.now() - started > 30_000 || child.exitCode !== null) {
        throw new Error(`${script} did not start`, { cause: error });
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

type Result = { name: string; requestsPerSecond: number; p50: number; p99: number; errors: number; non2xx: number };

async function measure(name: string, url: string, body: string, authorization: string): Promise<Result> {
  const options = {
    url,
    method: 'POST' as const,
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization },
    body,
    connections,
  };
  await autocannon({ ...options, duration: 2 }); // warm-up
  const result = await autocannon({ ...options, duration });
  return {
    name,
    requestsPerSecond: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors,
    non2xx: result.non2xx,
  };
}

const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;
const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();

const results: Result[] = [];

// Baseline first, alone on the machine.
if (wanted('baseline')) {
  const port = await freePort();
  const baseline = await startProcess('bench/baseline.ts', port);
  results.push(
    await measure(
      'baseline: bare oidc-provider, client_credentials',
      `http://127.0.0.1:${port}/token`,
      form({ grant_type: 'client_credentials', resource: baselineResource, scope: 'read write' }),
      basic(baselineClient.id, baselineClient.secret),
    ),
  );
  baseline.kill('SIGTERM');
  await once(baseline, 'exit');
}

{
  const port = await freePort();
  const admin = { id: 'bench-admin', secret: 'bench-admin-secret-0123456789' };
  const dbUrl =
    database === 'mysql' ? await freshDatabaseUrl() : `sqlite:${join(mkdtempSync(join(tmpdir(), 'bench-')), 'bench.sqlite3')}`;
  const service = await startProcess('lib/main.ts', port, {
    ENDPOINT: `http://127.0.0.1:${port}`,
    DB_URL: dbUrl,
    BOOTSTRAP_ADMIN_CLIENT_ID: admin.id,
    BOOTSTRAP_ADMIN_CLIENT_SECRET: admin.secret,
  });
  const base = `http://127.0.0.1:${port}`;
  const token = await got
    .post(`${base}/oidc/token`, {
      form: { grant_type: 'client_credentials', resource: `http://127.0.0.1:${port}/api`, scope: 'all' },
      headers: { authorization: basic(admin.id, admin.secret) },
    })
    .json<{ access_token: string }>();
  const api = got.extend({ prefixUrl: `${base}/api`, headers: { authorization: `Bearer ${token.access_token}` } });
  const resource = await api.post('resources', { json: { name: 'Bench', indicator: baselineResource } }).json<{ id: string }>();
  const scopeIds = [];
  for (const name of ['read', 'write']) {
    scopeIds.push((await api.post(`resources/${resource.id}/scopes`, { json: { name } }).json<{ id: string }>()).id);
  }
  const role = await api
    .post('roles', { json: { name: 'bench', description: 'bench', type: 'MachineToMachine', scopeIds } })
    .json<{ id: string }>();
  const application = await api
    .post('applications', { json: { name: 'bench', type: 'MachineToMachine' } })
    .json<{ id: string; secret: string }>();
  await api.post(`applications/${application.id}/roles`, { json: { roleIds: [role.id] } });

  if (wanted('client-credentials')) results.push(
    await measure(
      `service (${database}): client_credentials`,
      `${base}/oidc/token`,
      form({ grant_type: 'client_credentials', resource: baselineResource, scope: 'read write' }),
      basic(application.id, application.secret),
    ),
  );

  // Token exchange: a user holding read on the API signs in at a front end for API A; API A's
  // backend exchanges that token for one for the API.
  const apiA = 'https://api-a.bench.example.com';
  await api.post('resources', { json: { name: 'API A', indicator: apiA } });
  const userRole = await api.post('roles', { json: { name: 'bench-user', description: 'bench', scopeIds } }).json<{ id: string }>();
  const user = { username: 'bench_user', password: 'Bench-Password-9' };
  const created = await api.post('users', { json: user }).json<{ id: string }>();
  await api.post(`users/${created.id}/roles`, { json: { roleIds: [userRole.id] } });
  const redirectUri = 'http://frontend.bench/callback';
  const frontend = await api
    .post('applications', { json: { name: 'front end', type: 'SPA', oidcClientMetadata: { redirectUris: [redirectUri], postLogoutRedirectUris: [] } } })
    .json<{ id: string }>();
  const backend = await api
    .post('applications', { json: { name: 'API A', type: 'MachineToMachine', customClientMetadata: { allowTokenExchange: true } } })
    .json<{ id: string; secret: string }>();
  const subjectToken = await signInForToken(base, frontend.id, redirectUri, user, apiA);
  if (wanted('token-exchange')) results.push(
    await measure(
      `service (${database}): token exchange`,
      `${base}/oidc/token`,
      form({
        grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
        subject_token: subjectToken,
        subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
        resource: baselineResource,
        scope: 'read write',
      }),
      basic(backend.id, backend.secret),
    ),
  );
  service.kill('SIGTERM');
  await once(service, 'exit');
}

const baseline = results.find((result) => result.name.startsWith('baseline')) ?? results[0];
console.log(`\n${cpus().length} cores (${cpus()[0]?.model}), Node ${process.version}, ${connections} connections, ${duration} s each\n`);
console.log('| scenario | req/s | % of baseline | p50 ms | p99 ms | errors | non-2xx |');
console.log('|---|---:|---:|---:|---:|---:|---:|');
for (const result of results) {
  const share = ((result.requestsPerSecond / baseline!.requestsPerSecond) * 100).toFixed(0);
  console.log(
    `| ${result.name} | ${result.requestsPerSecond.toFixed(0)} | ${share}% | ${result.p50} | ${result.p99} | ${result.errors} | ${result.non2xx} |`,
  );
}
process.exit(0);
