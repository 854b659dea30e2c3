import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import type { Knex } from 'knex';

import { openDatabase } from '../../lib/storage/database.ts';
import { removeDatabase, testDatabase } from '../support/database.ts';
import { type HttpResponse, startService, type TestService } from '../support/service.ts';
import { ifSet } from '../support/values.ts';

const expectReady = (response: HttpResponse) => {
  expect(response.statusCode, JSON.stringify(response.body)).to.equal(200);
  expect(response.body).to.deep.equal({ status: 'ok' });
  expect(response.headers['cache-control']).to.equal('no-store');
};

const expectNotReady = (response: HttpResponse, reason: string) => {
  expect(response.statusCode, JSON.stringify(response.body)).to.equal(503);
  expect(response.body).to.include({ status: 'unavailable', reason });
  expect(response.body.message).to.be.a('string');
};

/** The service's JSON log lines. */
const logLines = (service: TestService) =>
  service
    .logs()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);

describe('health probes: /health/live and /health/ready', () => {
  describe('a running service', () => {
    let service: TestService;
    let db: Knex;
    before(async () => {
      service = await startService({ logs: true });
      db = openDatabase(service.config.dbUrl);
    });
    after(async () => {
      await ifSet(db)?.destroy();
      await ifSet(service)?.stop();
    });

    it('answers 200 {status: "ok"} to both, and /api/status still answers 204', async () => {
      expectReady(await service.http.get('health/live'));
      expectReady(await service.http.get('health/ready'));
      expect((await service.http.get('api/status')).statusCode).to.equal(204);
    });

    it('logs probes at debug, not info (one every few seconds would drown the log)', async () => {
      await service.http.get('health/ready');
      await service.http.get('health/live');
      const probes = logLines(service).filter(
        (line) => line.msg === 'request' && String(line.path).startsWith('/health/'),
      );
      expect(probes.length).to.be.greaterThan(0);
      expect(probes.map((line) => line.level)).to.satisfy((levels: number[]) => levels.every((level) => level === 20));
    });

    it("answers 503 migrations_pending while the database lacks this version's newest migration, logs it once, and recovers", async () => {
      // As after restoring a backup taken before the last upgrade, under a running instance.
      const newest = await db('knex_migrations')
        .orderBy('id', 'desc')
        .first<{ id: number; name: string; batch: number; migration_time: unknown }>();
      await db('knex_migrations').where({ id: newest.id }).delete();
      try {
        const first = await service.http.get('health/ready');
        expectNotReady(first, 'migrations_pending');
        expect(first.body.message).to.include(newest.name);
        expectNotReady(await service.http.get('health/ready'), 'migrations_pending');
        // Alive all the same: restarting would not help.
        expectReady(await service.http.get('health/live'));
      } finally {
        await db('knex_migrations').insert(newest);
      }
      expectReady(await service.http.get('health/ready'));
      const changes = logLines(service).filter(
        (line) => String(line.msg).startsWith('not ready') || String(line.msg).startsWith('ready again'),
      );
      expect(changes.map((line) => [line.level, line.reason])).to.deep.equal([
        [40, 'migrations_pending'],
        [30, undefined],
      ]);
    });
  });

  it(`answers 503 database_unavailable when its database is gone (${testDatabase === 'sqlite' ? 'the file removed' : 'dropped'}), and stays live`, async () => {
    const service = await startService({ logs: true });
    try {
      expectReady(await service.http.get('health/ready'));
      await removeDatabase(service.config.dbUrl);
      expectNotReady(await service.http.get('health/ready'), 'database_unavailable');
      expectReady(await service.http.get('health/live'));
      const logged = logLines(service).filter(
        (line) =>
          line.msg === 'not ready: ' + 'The database did not answer.' ||
          String(line.msg).startsWith('not ready: The database file'),
      );
      expect(logged).to.have.length(1);
      expect(logged[0]).to.include({ level: 40, reason: 'database_unavailable' });
    } finally {
      await service.stop();
    }
  });

  it('answers 503 shutting_down once the service is stopping, while requests in flight finish', async () => {
    // A webhook receiver that holds its answer: the service's shutdown waits for that delivery.
    const held: ServerResponse[] = [];
    let arrived: () => void = () => {};
    const delivery = new Promise<void>((resolve) => (arrived = resolve));
    const receiver = createServer((request, response) => {
      request.resume();
      held.push(response);
      arrived();
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const service = await startService();
    try {
      const { port } = receiver.address() as AddressInfo;
      const hook = await service.api.post('hooks', {
        json: { name: 'held', events: ['User.Created'], config: { url: `http://127.0.0.1:${port}/hook` } },
      });
      expect(hook.statusCode).to.equal(201);
      expect((await service.api.post('users', { json: { username: `held_${Date.now()}` } })).statusCode).to.equal(200);
      await delivery;

      const stopping = service.service.close();
      expectNotReady(await service.http.get('health/ready'), 'shutting_down');
      expectReady(await service.http.get('health/live'));
      for (const response of held) {
        response.end('ok');
      }
      await stopping;
    } finally {
      receiver.close();
    }
  });
});
