import { createServer, type Server, Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';

import { freshDatabaseUrl, testDatabase } from '../support/database.ts';
import { eventually } from '../support/eventually.ts';
import { freePort, type HttpResponse, startService, type TestService } from '../support/service.ts';
import { ifSet } from '../support/values.ts';

/**
 * A TCP relay between the service and the MariaDB server that the test can cut (every connection
 * dropped, new ones refused) and restore on the same port: the database as a network outage shows it.
 */
class CuttableRelay {
  #server: Server | undefined;
  readonly #sockets = new Set<Socket>();

  readonly port: number;
  private readonly target: { host: string; port: number };

  private constructor(port: number, target: { host: string; port: number }) {
    this.port = port;
    this.target = target;
  }

  static async open(target: { host: string; port: number }): Promise<CuttableRelay> {
    const relay = new CuttableRelay(await freePort(), target);
    await relay.restore();
    return relay;
  }

  async restore(): Promise<void> {
    const server = createServer((client) => {
      const upstream = new Socket();
      for (const socket of [client, upstream]) {
        this.#sockets.add(socket);
        socket.on('close', () => this.#sockets.delete(socket));
        socket.on('error', () => undefined);
      }
      upstream.connect(this.target.port, this.target.host);
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    this.#server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', resolve);
    });
  }

  async cut(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    for (const socket of this.#sockets) {
      socket.destroy();
    }
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  }
}

const logLines = (service: TestService) =>
  service
    .logs()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { level: number; msg: string; reason?: string });

const expectUnavailable = (what: string, response: HttpResponse) => {
  expect(response.statusCode, `${what}: ${JSON.stringify(response.body)}`).to.equal(503);
  expect(response.headers['content-type'], what).to.match(/^application\/json/);
  const body: unknown = typeof response.body === 'string' ? JSON.parse(response.body) : response.body;
  expect(body, what).to.deep.equal({
    code: 'database.unavailable',
    message: 'The service cannot reach its database. Please try again shortly.',
  });
  expect(Number(response.headers['retry-after']), what).to.be.within(1, 60);
  expect(response.headers['cache-control'], what).to.equal('no-store');
};

/** Every kind of request a client makes: the open API, the management API, OIDC, the hosted pages. */
const requests = (service: TestService): Array<[string, () => Promise<HttpResponse>]> => [
  ['GET /api/status', () => service.http.get('api/status')],
  ['GET /api/applications', () => service.api.get('applications')],
  ['POST /api/users', () => service.api.post('users', { json: { username: `outage_${Date.now()}` } })],
  ['GET /oidc/.well-known/openid-configuration', () => service.http.get('oidc/.well-known/openid-configuration')],
  [
    'POST /oidc/token',
    () =>
      service.http.post('oidc/token', {
        form: {
          grant_type: 'client_credentials',
          client_id: 'test-admin',
          client_secret: 'test-admin-secret-0123456789',
        },
      }),
  ],
  ['GET /sign-in', () => service.http.get('sign-in', { responseType: 'text' })],
];

(testDatabase === 'mysql' ? describe : describe.skip)('a database that is gone, and comes back', function () {
  // SQLite has no server to lose: the file stays open in the process (its removal: health.test.ts).
  this.timeout(60_000);
  let relay: CuttableRelay;
  let service: TestService;

  before(async () => {
    const direct = new URL(await freshDatabaseUrl());
    relay = await CuttableRelay.open({ host: direct.hostname, port: Number(direct.port || 3306) });
    direct.host = `127.0.0.1:${relay.port}`;
    service = await startService({ dbUrl: direct.toString(), logs: true });
  });
  after(async () => {
    await ifSet(service)?.stop();
    await ifSet(relay)?.cut();
  });

  it('answers every request JSON 503 with Retry-After while it is gone, logs it once, and serves again', async () => {
    for (const [what, request] of requests(service)) {
      expect((await request()).statusCode, what).to.be.below(500);
    }
    const before = logLines(service).length;

    await relay.cut();
    for (let round = 0; round < 3; round++) {
      for (const [what, request] of requests(service)) {
        expectUnavailable(what, await request());
      }
    }
    const ready = await service.http.get('health/ready');
    expect(ready.statusCode).to.equal(503);
    expect(ready.body).to.include({ status: 'unavailable', reason: 'database_unavailable' });
    expect((await service.http.get('health/live')).statusCode).to.equal(200);
    // Background work (webhook deliveries, jobs) meets the outage too: still the one line.
    await sleep(1500);

    await relay.restore();
    await eventually(async () => (await service.http.get('health/ready')).statusCode === 200, 10_000, 'ready again');
    for (const [what, request] of requests(service)) {
      expect((await request()).statusCode, what).to.be.below(500);
    }

    const lines = logLines(service)
      .slice(before)
      .filter((line) => line.msg !== 'request');
    const warnings = lines.filter((line) => line.level >= 40);
    expect(
      warnings.map((line) => [line.level, line.reason, line.msg]),
      JSON.stringify(warnings),
    ).to.deep.equal([[40, 'database_unavailable', 'database unavailable: answering 503 until it answers again']]);
    expect(lines.filter((line) => line.msg === 'database available again')).to.have.length(1);
  });
});
