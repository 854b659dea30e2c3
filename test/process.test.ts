import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { got } from 'got';

import { builtScripts, production, useBuild } from './support/build.ts';
import { emptyDatabaseUrl, freshDatabaseUrl, serverUrl, testDatabase } from './support/database.ts';
import { eventually } from './support/eventually.ts';
import { freePort, startService } from './support/service.ts';

type Started = { child: ChildProcess; output: () => string; errors: () => string; exited: Promise<number> };

/** Processes a test started: a failed test leaves none behind. */
const running = new Set<ChildProcess>();

/** A compiled entry point as users run it (`npm start` is `node dist/lib/main.js`), configured by environment. */
function startProcess(
  env: Record<string, string>,
  script: string = builtScripts.service,
  args: string[] = [],
): Started {
  const child = spawn(process.execPath, [script, ...args], {
    env: { ...process.env, ...production, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let errors = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    errors += chunk.toString();
  });
  running.add(child);
  const exited = once(child, 'exit').then(([code]) => {
    running.delete(child);
    return code as number;
  });
  return { child, output: () => output, errors: () => errors, exited };
}

/** How long a child process may take to print what a test waits for, on a loaded machine. */
const slowMs = 90_000;

/**
 * What a failed start printed, but oidc-provider's own notice on Node 20 ("Unsupported runtime"),
 * which it prints as it is loaded, before the service runs.
 */
const ownLines = (text: string) =>
  text.split('\n').filter((line) => line.trim() !== '' && !line.startsWith('oidc-provider WARNING'));

/** The start fails with exit code 1 and one line of stderr, no stack trace. */
async function failedStart(started: Started): Promise<string> {
  const code = await started.exited;
  expect(code, started.output()).to.equal(1);
  const lines = ownLines(started.errors());
  expect(lines, started.errors()).to.have.length(1);
  expect(started.output()).to.not.match(/\n\s+at /);
  return lines[0];
}

describe('the service process (the build)', () => {
  useBuild();
  afterEach(() => {
    for (const child of running) {
      child.kill('SIGKILL');
    }
  });

  it('prints generated admin credentials once at first start, as one JSON line on stderr, and they work', async () => {
    // A user's first start: on nothing, migrations and all.
    const dbUrl = await emptyDatabaseUrl();
    const port = await freePort();
    const first = startProcess({ DB_URL: dbUrl, PORT: String(port) });
    await eventually(() => first.output().includes('identity service started'), slowMs, 'start');
    const line = first
      .errors()
      .split('\n')
      .find((text) => text.includes('"clientSecret"'));
    const {
      clientId: id,
      clientSecret: secret,
      level,
    } = JSON.parse(line ?? '{}') as { clientId?: string; clientSecret?: string; level?: number };
    expect(id).to.be.a('string');
    expect(secret).to.be.a('string');
    expect(level).to.equal(40);
    expect(first.output().split(secret!)).to.have.length(2);

    const token = await got
      .post(`http://127.0.0.1:${port}/oidc/token`, {
        form: { grant_type: 'client_credentials', resource: `http://localhost:${port}/api`, scope: 'all' },
        username: id,
        password: secret,
      })
      .json<{ access_token: string; scope: string }>();
    expect(token.scope).to.equal('all');
    const resources = await got(`http://127.0.0.1:${port}/api/resources`, {
      headers: { authorization: `Bearer ${token.access_token}` },
    });
    expect(resources.statusCode).to.equal(200);

    first.child.kill('SIGTERM');
    await first.exited;

    const second = startProcess({ DB_URL: dbUrl, PORT: String(port) });
    await eventually(() => second.output().includes('identity service started'), slowMs, 'restart');
    expect(second.output()).to.not.include(secret!);
    expect(second.output()).to.not.include('clientSecret');
    second.child.kill('SIGTERM');
    await second.exited;
  });

  it('serves the hosted sign-in pages and the console from the build, and its start line names the issuer, the console and the sign-in page', async () => {
    const port = await freePort();
    const endpoint = `http://127.0.0.1:${port}`;
    const { child, output, exited } = startProcess({
      DB_URL: await freshDatabaseUrl(),
      PORT: String(port),
      ENDPOINT: endpoint,
    });
    await eventually(() => output().includes('identity service started'), slowMs, 'start');
    const line = output()
      .split('\n')
      .find((text) => text.includes('identity service started'))!;
    expect(JSON.parse(line)).to.include({
      issuer: `${endpoint}/oidc`,
      console: `${endpoint}/console`,
      signIn: `${endpoint}/sign-in`,
      port,
    });

    const signIn = await got(`${endpoint}/sign-in`);
    expect(signIn.headers['content-type']).to.match(/^text\/html/);
    const script = /src="(\/experience-assets\/[^"]+\.js)"/.exec(signIn.body)?.[1];
    expect((await got(`${endpoint}${script}`)).headers['content-type']).to.match(/javascript/);
    const consolePage = await got(`${endpoint}/console`);
    expect(consolePage.body).to.match(/src="\/console\/assets\/[^"]+\.js"/);
    const discovery = await got(`${endpoint}/oidc/.well-known/openid-configuration`).json<{ issuer: string }>();
    expect(discovery.issuer).to.equal(`${endpoint}/oidc`);

    child.kill('SIGTERM');
    expect(await exited).to.equal(0);
  });

  it('logs one JSON line per request in production and exits 0 on SIGTERM', async () => {
    const { child, output, exited } = startProcess({
      DB_URL: await freshDatabaseUrl(),
      PORT: String(await freePort()),
    });
    await eventually(() => output().includes('identity service started'), slowMs, 'start');
    const port = Number(/"port":(\d+)/.exec(output())?.[1]);
    await got(`http://127.0.0.1:${port}/api/status`);
    await eventually(() => output().includes('/api/status'), slowMs, 'request log');
    const line = output()
      .split('\n')
      .find((text) => text.includes('/api/status'))!;
    expect(JSON.parse(line)).to.include({ method: 'GET', path: '/api/status', status: 204 });

    child.kill('SIGTERM');
    expect(await exited).to.equal(0);
  });

  it('refuses to start with a bad setting and names it', async () => {
    const line = await failedStart(startProcess({ PORT: 'not-a-port' }));
    expect(line).to.match(/^invalid configuration: PORT/);
  });

  it('stops on a port in use with one line naming PORT, before printing any credentials; the next start prints them', async () => {
    const blocker: Server = createServer();
    blocker.listen(0);
    await once(blocker, 'listening');
    const { port } = blocker.address() as { port: number };
    const dbUrl = await freshDatabaseUrl();
    try {
      const busy = startProcess({ DB_URL: dbUrl, PORT: String(port) });
      const line = await failedStart(busy);
      expect(line).to.equal(`port ${port} is in use: stop what listens there or set PORT to a free port`);
      expect(busy.output()).to.not.match(/clientSecret|setupToken/);
    } finally {
      blocker.close();
    }

    // Credentials made but never shown would be lost: the start that binds its port shows them.
    const next = startProcess({ DB_URL: dbUrl, PORT: String(await freePort()) });
    await eventually(() => next.output().includes('identity service started'), slowMs, 'start');
    expect(next.errors()).to.include('"clientSecret"');
    expect(next.errors()).to.include('"setupToken"');
    next.child.kill('SIGTERM');
    await next.exited;
  });

  for (const scheme of ['mysql', 'postgres', 'postgresql']) {
    it(`stops on an unreachable ${scheme}:// database after DB_CONNECT_TIMEOUT with one line naming DB_URL, without its password`, async () => {
      const closedPort = await freePort();
      const started = startProcess({
        DB_URL: `${scheme}://someone:hunter2-secret@127.0.0.1:${closedPort}/identity`,
        DB_CONNECT_TIMEOUT: '1',
        PORT: String(await freePort()),
      });
      const line = await failedStart(started);
      expect(line).to.equal(
        `cannot reach the database at 127.0.0.1:${closedPort} (ECONNREFUSED) within 1 s: start it, or correct the host and port in DB_URL (DB_CONNECT_TIMEOUT sets how long start-up waits)`,
      );
      expect(started.output()).to.not.include('hunter2');
    });
  }

  it('stops on a SQLite path it cannot create with one line naming DB_URL', async () => {
    // A folder that cannot be made: its parent is a file.
    const folder = mkdtempSync(join(tmpdir(), 'identity-test-'));
    const file = join(folder, 'a-file');
    writeFileSync(file, '');
    try {
      const line = await failedStart(
        startProcess({ DB_URL: `sqlite:${file}/identity.sqlite3`, PORT: String(await freePort()) }),
      );
      expect(line).to.equal(
        `cannot open the SQLite database at ${file}/identity.sqlite3 (EEXIST): correct the path in DB_URL, or let this user create and write it`,
      );
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('migrates from the build (`npm run migrate`), under the names the sources use', async () => {
    const dbUrl = await emptyDatabaseUrl();
    const first = startProcess({ DB_URL: dbUrl }, builtScripts.migrate);
    expect(await first.exited).to.equal(0);
    expect(first.output()).to.match(/^applied: 0001_foundation, 0002_users, /m);
    const again = startProcess({ DB_URL: dbUrl }, builtScripts.migrate);
    expect(await again.exited).to.equal(0);
    expect(again.output()).to.include('already up to date');
    // The sources (what the rest of the suite runs) find nothing left to apply, and work on it.
    const service = await startService({ dbUrl });
    try {
      expect((await service.api.get('resources')).statusCode).to.equal(200);
    } finally {
      await service.stop();
    }
  });

  describe('on a database server (MySQL/MariaDB, PostgreSQL)', function () {
    before(function () {
      if (serverUrl === undefined) {
        this.skip();
      }
    });
    const server = () => new URL(serverUrl ?? '');
    const scheme = () => server().protocol.replace(/:$/, '');

    it('stops on wrong credentials at once, with one line naming the user and DB_URL, without the password', async () => {
      const { host } = server();
      const started = startProcess({
        DB_URL: `${scheme()}://nobody-here:wrong-password-42@${host}/identity`,
        PORT: String(await freePort()),
      });
      const line = await failedStart(started);
      expect(line).to.equal(
        `the database at ${host} refused user "nobody-here" (access denied): correct the user and password in DB_URL`,
      );
      expect(started.output()).to.not.include('wrong-password-42');
    });

    it('stops on a database that does not exist, naming it', async () => {
      const url = server();
      url.pathname = '/no_such_database_here';
      const line = await failedStart(startProcess({ DB_URL: url.toString(), PORT: String(await freePort()) }));
      const encoding = testDatabase === 'postgres' ? 'encoding UTF8' : 'character set utf8mb4';
      expect(line).to.equal(
        `the database "no_such_database_here" does not exist at ${url.host}: create it (${encoding}), or correct its name in DB_URL`,
      );
    });

    it('waits for a database that comes up within DB_CONNECT_TIMEOUT', async () => {
      // A database that is not there yet: a port nothing listens on, then a relay to the real one.
      const target = new URL(await freshDatabaseUrl());
      const relayPort = await freePort();
      const url = new URL(target);
      url.host = `127.0.0.1:${relayPort}`;
      const started = startProcess({
        DB_URL: url.toString(),
        DB_CONNECT_TIMEOUT: '60',
        PORT: String(await freePort()),
      });
      await eventually(() => started.output().includes('database not reachable yet'), slowMs, 'a retry');
      const relay = createServer((socket) => {
        const upstream = connect(Number(target.port), target.hostname);
        socket.pipe(upstream).pipe(socket);
        socket.on('error', () => upstream.destroy());
        upstream.on('error', () => socket.destroy());
      });
      relay.listen(relayPort, '127.0.0.1');
      try {
        await eventually(() => started.output().includes('identity service started'), 60_000, 'start');
        started.child.kill('SIGTERM');
        expect(await started.exited).to.equal(0);
      } finally {
        relay.close();
      }
    });
  });
});
