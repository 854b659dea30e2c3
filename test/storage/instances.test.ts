import { expect } from 'chai';
import { createRemoteJWKSet, jwtVerify } from 'jose';

import { emptyDatabaseUrl, freshDatabaseUrl, openDatabase, testDatabase } from '../support/database.ts';
import { createMachineWithScopes, createResource } from '../support/fixtures.ts';
import { startService, type TestService } from '../support/service.ts';

describe('one database, several lives', () => {
  it('keeps keys and data across a restart', async () => {
    const dbUrl = await freshDatabaseUrl();
    const first = await startService({ dbUrl });
    const { resource, scopeIds } = await createResource(first, ['read']);
    const { application } = await createMachineWithScopes(first, [scopeIds.read]);
    const jwksBefore = (await first.http.get('oidc/jwks')).body;
    const { body } = await first.token(application.id, application.secret, {
      grant_type: 'client_credentials',
      resource: resource.indicator,
      scope: 'read',
    });
    const port = Number(new URL(first.url).port);
    await first.stop();

    const second = await startService({ dbUrl, port });
    try {
      expect((await second.http.get('oidc/jwks')).body).to.deep.equal(jwksBefore);
      const { payload } = await jwtVerify(
        String(body.access_token),
        createRemoteJWKSet(new URL(`${second.url}/oidc/jwks`)),
        {
          issuer: `${second.url}/oidc`,
          audience: resource.indicator,
        },
      );
      expect(payload.scope).to.equal('read');
      const again = await second.token(application.id, application.secret, {
        grant_type: 'client_credentials',
        resource: resource.indicator,
        scope: 'read',
      });
      expect(again.statusCode).to.equal(200);
      expect((await second.api.get(`resources/${resource.id}`)).statusCode).to.equal(200);
    } finally {
      await second.stop();
    }
  });

  it('starts on a database where instances starting together left two migration lock rows', async function () {
    this.timeout(30_000);
    // knex creates its lock table and then, finding it empty, inserts the lock row: two instances
    // starting at once could both find it empty, and with two rows no one ever takes the lock.
    const dbUrl = await emptyDatabaseUrl();
    const db = openDatabase(dbUrl);
    try {
      await db.schema.createTable('knex_migrations', (table) => {
        table.increments();
        table.string('name');
        table.integer('batch');
        table.timestamp('migration_time');
      });
      await db.schema.createTable('knex_migrations_lock', (table) => {
        table.increments('index').primary();
        table.integer('is_locked');
      });
      await db('knex_migrations_lock').insert([{ is_locked: 0 }, { is_locked: 0 }]);
    } finally {
      await db.destroy();
    }
    const service = await startService({ dbUrl });
    try {
      expect((await service.http.get('health/ready')).statusCode).to.equal(200);
    } finally {
      await service.stop();
    }
  });

  describe('several instances at once', () => {
    it('migrate once and all start, however their starts interleave', async function () {
      // Three rounds of several starts: 25 s to 60 s on a 2-core host running the three engines' suites.
      this.timeout(240_000);
      for (let round = 0; round < 3; round += 1) {
        const dbUrl = await emptyDatabaseUrl();
        const services = await Promise.all(Array.from({ length: 4 }, () => startService({ dbUrl })));
        try {
          for (const service of services) {
            expect((await service.http.get('health/ready')).statusCode).to.equal(200);
          }
        } finally {
          await Promise.all(services.map((service) => service.stop()));
        }
      }
    });
  });

  describe('two instances at once', () => {
    let a: TestService;
    let b: TestService;
    before(async function () {
      this.timeout(90_000);
      const dbUrl = await emptyDatabaseUrl();
      // Started together: migrations, key generation and the bootstrap admin must not race.
      [a, b] = await Promise.all([
        startService({ dbUrl, env: { ENDPOINT: 'http://identity.test' } }),
        startService({ dbUrl, env: { ENDPOINT: 'http://identity.test' } }),
      ]);
    });
    after(() => Promise.all([a.stop(), b.stop()]));

    const jwksOf = (service: TestService) => createRemoteJWKSet(new URL(`${service.url}/oidc/jwks`));

    it("publish the same keys and accept each other's tokens", async () => {
      expect((await a.http.get('oidc/jwks')).body).to.deep.equal((await b.http.get('oidc/jwks')).body);
      const { resource, scopeIds } = await createResource(a, ['read']);
      const { application } = await createMachineWithScopes(a, [scopeIds.read]);
      // Created through A, usable at B on the next request.
      const { statusCode, body } = await b.token(application.id, application.secret, {
        grant_type: 'client_credentials',
        resource: resource.indicator,
        scope: 'read',
      });
      expect(statusCode).to.equal(200);
      for (const service of [a, b]) {
        const { payload } = await jwtVerify(String(body.access_token), jwksOf(service), {
          issuer: 'http://identity.test/oidc',
          audience: resource.indicator,
        });
        expect(payload.scope).to.equal('read');
      }
    });

    it('see a change made by the other instance after the server dropped their idle connections', async function () {
      if (testDatabase === 'sqlite') {
        this.skip();
      }
      const { resource, scopeIds } = await createResource(a, ['read', 'write']);
      const { application, role } = await createMachineWithScopes(a, [scopeIds.read]);
      const scopeAt = async (service: TestService) => {
        const { statusCode, body } = await service.token(application.id, application.secret, {
          grant_type: 'client_credentials',
          resource: resource.indicator,
          scope: 'read write',
        });
        expect(statusCode).to.equal(200);
        return body.scope;
      };
      expect(await scopeAt(a)).to.equal('read');
      // As a server restart or wait_timeout would: every idle connection of this database is killed.
      const db = openDatabase(a.config.dbUrl);
      try {
        if (testDatabase === 'postgres') {
          const { rows } = await db.raw<{ rows: Array<{ pid: number }> }>(
            "select pid from pg_stat_activity where datname = current_database() and state = 'idle' and pid <> pg_backend_pid()",
          );
          expect(rows.length).to.be.at.least(2);
          for (const { pid } of rows) {
            await db.raw('select pg_terminate_backend(?)', [pid]);
          }
        } else {
          const [rows] = (await db.raw(
            "select id from information_schema.processlist where db = database() and command = 'Sleep' and id <> connection_id()",
          )) as [Array<{ id: number }>];
          expect(rows.length).to.be.at.least(2);
          for (const { id } of rows) {
            await db.raw('kill ?', [id]).catch(() => undefined);
          }
        }
      } finally {
        await db.destroy();
      }
      // At once, while the server may still be closing them: the first query of a request meets a
      // connection that is gone before it was used, and is run again on a fresh one.
      expect(await scopeAt(a)).to.equal('read');
      expect(
        (await b.api.post(`roles/${role.id}/scopes`, { json: { scopeIds: [scopeIds.write] } })).statusCode,
      ).to.equal(201);
      expect(await scopeAt(a)).to.equal('read write');
      expect(await scopeAt(a)).to.equal('read write');
    });

    it('see a key rotation made by the other instance on the next request', async () => {
      await a.api.post('configs/oidc/private-keys/rotate', { json: {} });
      const kidsAtA = ((await a.http.get('oidc/jwks')).body as { keys: Array<{ kid: string }> }).keys.map(
        (key) => key.kid,
      );
      const kidsAtB = ((await b.http.get('oidc/jwks')).body as { keys: Array<{ kid: string }> }).keys.map(
        (key) => key.kid,
      );
      expect(kidsAtB).to.deep.equal(kidsAtA);
      expect(kidsAtA).to.have.length(3);
    });
  });
});
