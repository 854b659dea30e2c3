import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { got } from 'got';
import type { Knex } from 'knex';

import { openDatabase } from '../../lib/storage/database.ts';
import { Receiver } from '../hooks/receiver.ts';
import { freshDatabaseUrl, testDatabase } from '../support/database.ts';
import { eventually } from '../support/eventually.ts';
import { expectAllOk } from '../support/expect.ts';
import {
  adminClient,
  freePort,
  type HttpClient,
  type HttpResponse,
  startService,
  type TestService,
} from '../support/service.ts';
import { ifSet, unique } from '../support/values.ts';

/** Starts `count` requests at once and waits for all of them. */
const concurrently = <T>(count: number, request: (index: number) => Promise<T>): Promise<T[]> =>
  Promise.all(Array.from({ length: count }, (_, index) => request(index)));

describe('concurrent writes keep every change', () => {
  let service: TestService;
  /** A connection of the test's own, to compare what the database holds. */
  let db: Knex;
  before(async () => {
    service = await startService();
    db = openDatabase(service.config.dbUrl);
  });
  after(async () => {
    await db.destroy();
    await service.stop();
  });

  const createUser = async () => {
    const created = await service.api.post('users', { json: { username: unique('user') } });
    expect(created.statusCode, JSON.stringify(created.body)).to.equal(200);
    return created.body as { id: string };
  };

  it('20 concurrent custom-data merges of a user keep all 20 keys', async () => {
    const user = await createUser();
    expectAllOk(
      await concurrently(20, (index) =>
        service.api.patch(`users/${user.id}/custom-data`, { json: { customData: { [`key${index}`]: index } } }),
      ),
    );
    const { body } = await service.api.get(`users/${user.id}/custom-data`);
    expect(body).to.deep.equal(Object.fromEntries(Array.from({ length: 20 }, (_, index) => [`key${index}`, index])));
  });

  it('11 concurrent profile merges of a user keep all 11 fields', async () => {
    const user = await createUser();
    const fields: Record<string, unknown> = {
      familyName: 'Lovelace',
      givenName: 'Ada',
      middleName: 'King',
      nickname: 'ada',
      preferredUsername: 'countess',
      profile: 'https://example.com/ada',
      website: 'https://ada.example.com',
      gender: 'female',
      birthdate: '1815-12-10',
      zoneinfo: 'Europe/London',
      locale: 'en-GB',
    };
    expectAllOk(
      await Promise.all(
        Object.entries(fields).map(([key, value]) =>
          service.api.patch(`users/${user.id}/profile`, { json: { profile: { [key]: value } } }),
        ),
      ),
    );
    const { body } = await service.api.get(`users/${user.id}`);
    expect(body.profile).to.deep.equal(fields);
  });

  it('20 concurrent identity links of a user all succeed, and its identities match the identities table', async () => {
    const user = await createUser();
    // Ten targets, each set twice at once: the second of each pair replaces the first.
    const responses = await concurrently(20, (index) =>
      service.api.put(`users/${user.id}/identities/target${index % 10}`, {
        json: { userId: `${user.id}-${index}`, details: { index } },
      }),
    );
    expectAllOk(responses);
    const { body: identities } = await service.api.get(`users/${user.id}/identities`);
    expect(Object.keys(identities).sort()).to.deep.equal(
      Array.from({ length: 10 }, (_, index) => `target${index}`).sort(),
    );
    const rows: Array<{ target: string; identity_id: string }> = await db('user_social_identities')
      .where({ user_id: user.id })
      .select('target', 'identity_id');
    expect(Object.fromEntries(rows.map((row) => [row.target, row.identity_id]))).to.deep.equal(
      Object.fromEntries(
        Object.entries(identities as Record<string, { userId: string }>).map(([target, identity]) => [
          target,
          identity.userId,
        ]),
      ),
    );
    // And what each answer said was set is what PUT left for that identity at the time: its own link.
    for (const [index, response] of responses.entries()) {
      expect(response.body[`target${index % 10}`]).to.include({ userId: `${user.id}-${index}` });
    }
  });

  it('concurrent changes of different fields of an organization keep all of them', async () => {
    const created = await service.api.post('organizations', { json: { name: unique('org') } });
    const id = created.body.id as string;
    const changes = [
      ...Array.from({ length: 5 }, (_, index) => ({ name: `renamed ${index}` })),
      ...Array.from({ length: 5 }, (_, index) => ({ description: `described ${index}` })),
      ...Array.from({ length: 5 }, (_, index) => ({ customData: { index } })),
      ...Array.from({ length: 5 }, () => ({ isMfaRequired: true })),
    ];
    expectAllOk(await Promise.all(changes.map((json) => service.api.patch(`organizations/${id}`, { json }))));
    const { body } = await service.api.get(`organizations/${id}`);
    expect(body.name).to.match(/^renamed \d$/);
    expect(body.description).to.match(/^described \d$/);
    expect(body.customData).to.have.property('index');
    expect(body.isMfaRequired).to.equal(true);
  });

  it("concurrent changes of an application's metadata keep every field", async () => {
    const created = await service.api.post('applications', { json: { name: unique('app'), type: 'Traditional' } });
    const id = created.body.id as string;
    const changes = [
      { name: 'renamed' },
      { description: 'described' },
      { customData: { kept: true } },
      { oidcClientMetadata: { redirectUris: ['https://app.example.com/callback'] } },
      { oidcClientMetadata: { postLogoutRedirectUris: ['https://app.example.com/bye'] } },
      { oidcClientMetadata: { logoUri: 'https://app.example.com/logo.png' } },
      { oidcClientMetadata: { backchannelLogoutUri: 'https://app.example.com/logout' } },
      // customClientMetadata is replaced whole by a PATCH, as Logto's: one change carries all of it.
      {
        customClientMetadata: {
          idTokenTtl: 600,
          refreshTokenTtlInDays: 7,
          alwaysIssueRefreshToken: true,
          rotateRefreshToken: false,
          corsAllowedOrigins: ['https://app.example.com'],
        },
      },
    ];
    expectAllOk(await Promise.all(changes.map((json) => service.api.patch(`applications/${id}`, { json }))));
    const { body } = await service.api.get(`applications/${id}`);
    expect(body).to.include({ name: 'renamed', description: 'described' });
    expect(body.customData).to.deep.equal({ kept: true });
    expect(body.oidcClientMetadata).to.include({
      logoUri: 'https://app.example.com/logo.png',
      backchannelLogoutUri: 'https://app.example.com/logout',
    });
    expect(body.oidcClientMetadata.redirectUris).to.deep.equal(['https://app.example.com/callback']);
    expect(body.oidcClientMetadata.postLogoutRedirectUris).to.deep.equal(['https://app.example.com/bye']);
    expect(body.customClientMetadata).to.deep.include({
      idTokenTtl: 600,
      refreshTokenTtlInDays: 7,
      alwaysIssueRefreshToken: true,
      rotateRefreshToken: false,
      corsAllowedOrigins: ['https://app.example.com'],
    });
  });

  it('concurrent changes of different sign-in experience settings keep all of them', async () => {
    const changes = [
      { termsOfUseUrl: 'https://example.com/terms' },
      { privacyPolicyUrl: 'https://example.com/privacy' },
      { supportEmail: 'support@example.com' },
      { signInMode: 'SignIn' },
      { forgotPasswordMethods: ['EmailVerificationCode', 'PhoneVerificationCode'] },
      { mfa: { factors: ['Totp'], policy: 'UserControlled' } },
      { passwordPolicy: { length: { min: 10, max: 200 } } },
      { passwordPolicy: { rejects: { pwned: false, repetitionAndSequence: true, userInfo: true, words: [] } } },
      { sentinelPolicy: { maxAttempts: 7 } },
      { sentinelPolicy: { lockoutDuration: 33 } },
    ];
    expectAllOk(await Promise.all(changes.map((json) => service.api.patch('sign-in-exp', { json }))));
    const { body } = await service.api.get('sign-in-exp');
    expect(body).to.deep.include({
      termsOfUseUrl: 'https://example.com/terms',
      privacyPolicyUrl: 'https://example.com/privacy',
      supportEmail: 'support@example.com',
      signInMode: 'SignIn',
      forgotPasswordMethods: ['EmailVerificationCode', 'PhoneVerificationCode'],
      mfa: { factors: ['Totp'], policy: 'UserControlled' },
      sentinelPolicy: { maxAttempts: 7, lockoutDuration: 33 },
    });
    expect(body.passwordPolicy.length).to.deep.equal({ min: 10, max: 200 });
    expect(body.passwordPolicy.rejects).to.deep.include({ pwned: false, userInfo: true });
    await service.api.patch('sign-in-exp', { json: { signInMode: 'SignInAndRegister' } });
  });

  it('concurrent changes of different fields of a hook keep all of them', async () => {
    const created = await service.api.post('hooks', {
      json: { name: unique('hook'), events: ['User.Created'], config: { url: 'http://127.0.0.1:9/hook' } },
    });
    expect(created.statusCode).to.equal(201);
    const id = created.body.id as string;
    const changes = [
      { name: 'renamed' },
      { events: ['User.Deleted'] },
      { enabled: false },
      { config: { url: 'http://127.0.0.1:9/other', headers: { 'x-kept': 'yes' } } },
    ];
    for (let round = 0; round < 3; round++) {
      expectAllOk(await Promise.all(changes.map((json) => service.api.patch(`hooks/${id}`, { json }))));
    }
    const { body } = await service.api.get(`hooks/${id}`);
    expect(body).to.deep.include({
      name: 'renamed',
      events: ['User.Deleted'],
      enabled: false,
      config: { url: 'http://127.0.0.1:9/other', headers: { 'x-kept': 'yes' } },
    });
  });

  it("concurrent merges of a social connector's config and metadata keep every key", async () => {
    const created = await service.api.post('connectors', {
      json: {
        connectorId: 'oidc',
        // Saved only if its IdP answers: the service itself.
        config: { issuer: service.config.issuer, clientId: 'client', clientSecret: 'secret-0123456789' },
        metadata: { target: unique('idp').toLowerCase() },
      },
    });
    expect(created.statusCode, JSON.stringify(created.body)).to.equal(200);
    const id = created.body.id as string;
    const changes = [
      { config: { clientId: 'changed-client' } },
      { config: { scope: 'openid email' } },
      { config: { trustUnverifiedEmail: true } },
      { config: { tokenEndpointAuthMethod: 'client_secret_basic' } },
      { metadata: { name: { en: 'Renamed' } } },
      { metadata: { logo: 'https://idp.example.com/logo.png' } },
      { metadata: { logoDark: 'https://idp.example.com/dark.png' } },
      { syncProfile: true },
    ];
    expectAllOk(await Promise.all(changes.map((json) => service.api.patch(`connectors/${id}`, { json }))));
    const { body } = await service.api.get(`connectors/${id}`);
    expect(body.config).to.deep.include({
      clientId: 'changed-client',
      scope: 'openid email',
      trustUnverifiedEmail: true,
      tokenEndpointAuthMethod: 'client_secret_basic',
    });
    expect(body.metadata).to.deep.include({
      name: { en: 'Renamed' },
      logo: 'https://idp.example.com/logo.png',
      logoDark: 'https://idp.example.com/dark.png',
    });
    expect(body.syncProfile).to.equal(true);
  });

  it("concurrent merges of an SSO connector's config and branding keep every key", async () => {
    const created = await service.api.post('sso-connectors', {
      json: {
        providerName: 'OIDC',
        connectorName: unique('sso'),
        config: { issuer: 'https://idp.example.com', clientId: 'client', clientSecret: 'secret' },
      },
    });
    expect(created.statusCode, JSON.stringify(created.body)).to.equal(200);
    const id = created.body.id as string;
    const changes = [
      { config: { clientId: 'changed-client' } },
      { config: { scope: 'groups' } },
      { config: { trustUnverifiedEmail: true } },
      { branding: { displayName: 'Example' } },
      { branding: { logo: 'https://idp.example.com/logo.png' } },
      { branding: { darkLogo: 'https://idp.example.com/dark.png' } },
      { domains: ['example.com'] },
      { syncProfile: true },
    ];
    expectAllOk(await Promise.all(changes.map((json) => service.api.patch(`sso-connectors/${id}`, { json }))));
    const { body } = await service.api.get(`sso-connectors/${id}`);
    expect(body.config).to.deep.include({ clientId: 'changed-client', scope: 'groups', trustUnverifiedEmail: true });
    expect(body.branding).to.deep.equal({
      displayName: 'Example',
      logo: 'https://idp.example.com/logo.png',
      darkLogo: 'https://idp.example.com/dark.png',
    });
    expect(body.domains).to.deep.equal(['example.com']);
    expect(body.syncProfile).to.equal(true);
  });
});

/** The service as another process, on the same database and issuer as an in-process one. */
async function startProcess(
  env: Record<string, string>,
): Promise<{ child: ChildProcess; url: string; stop: () => Promise<void> }> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'lib/main.ts'], {
    env: { ...process.env, NODE_ENV: 'test', LOG_LEVEL: 'info', PORT: String(port), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  try {
    await eventually(
      () => {
        if (child.exitCode !== null) {
          throw new Error(`the second instance stopped:\n${output}`);
        }
        return output.includes('identity service started');
      },
      90_000,
      () => `the second instance started:\n${output}`,
    );
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  return {
    child,
    url: `http://127.0.0.1:${port}`,
    async stop() {
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}

describe('concurrent writes through two processes on one database', () => {
  let a: TestService;
  let b: Awaited<ReturnType<typeof startProcess>>;
  let bApi: HttpClient['got'];
  before(async function () {
    // Two starts, the second a process of its own, on a host running the three engines' suites.
    this.timeout(150_000);
    const dbUrl = await freshDatabaseUrl();
    const env = { ENDPOINT: 'http://identity.test' };
    a = await startService({ dbUrl, env });
    b = await startProcess({
      ...env,
      DB_URL: dbUrl,
      BOOTSTRAP_ADMIN_CLIENT_ID: adminClient.id,
      BOOTSTRAP_ADMIN_CLIENT_SECRET: adminClient.secret,
    });
    const { body } = await a.token(adminClient.id, adminClient.secret, {
      grant_type: 'client_credentials',
      resource: a.config.managementApiResource,
      scope: 'all',
    });
    bApi = got.extend({
      prefixUrl: `${b.url}/api`,
      throwHttpErrors: false,
      retry: { limit: 0 },
      responseType: 'json',
      headers: { authorization: `Bearer ${String(body.access_token)}` },
    });
  });
  after(async () => {
    await ifSet(b)?.stop();
    await ifSet(a)?.stop();
  });

  it('20 custom-data merges, half through each process, keep all 20 keys', async () => {
    const created = await a.api.post('users', { json: { username: unique('user') } });
    const userId = created.body.id as string;
    const responses = await concurrently(20, async (index) => {
      const json = { customData: { [`key${index}`]: index } };
      if (index % 2 === 0) {
        return a.api.patch(`users/${userId}/custom-data`, { json });
      }
      const response = await bApi.patch(`users/${userId}/custom-data`, { json });
      return { statusCode: response.statusCode, headers: response.headers, body: response.body };
    });
    expectAllOk(responses);
    const { body } = await a.api.get(`users/${userId}/custom-data`);
    expect(Object.keys(body).length).to.equal(20);
  });
});

/** A process of its own that takes SQLite's write lock and lets it go after `ms`. */
function holdSqliteWriteLock(filename: string, ms: number): { locked: Promise<void>; done: Promise<void> } {
  const script = `
    const db = new (require('better-sqlite3'))(process.argv[1]);
    db.exec('BEGIN IMMEDIATE');
    console.log('locked');
    setTimeout(() => { db.exec('COMMIT'); db.close(); }, Number(process.argv[2]));
  `;
  const child = spawn(process.execPath, ['-e', script, filename, String(ms)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const locked = new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => chunk.toString().includes('locked') && resolve());
    child.once('exit', () => reject(new Error('the lock holder exited before locking')));
  });
  const done = once(child, 'exit').then(() => undefined);
  return { locked, done };
}

describe('a transaction run again after a lock conflict', () => {
  let service: TestService;
  let receiver: Receiver;
  let db: Knex;
  before(async () => {
    service = await startService({ env: { HOOKS_RETRY_SCHEDULE: '0.05' } });
    receiver = await Receiver.start();
    db = openDatabase(service.config.dbUrl);
  });
  after(async () => {
    await db.destroy();
    await receiver.close();
    await service.stop();
  });

  /** A raw `count(*) as n` (a bigint, which a driver may answer as a string): pg answers `{ rows }`, mysql2 `[rows, fields]`. */
  async function countOf(sql: string, bindings: string[]): Promise<number> {
    const result = await db.raw(sql, bindings);
    return Number((testDatabase === 'postgres' ? result.rows : result[0])[0].n);
  }

  /**
   * Waits until the request under test waits for the users cache version the test has locked. The
   * server's list of sessions shows the waiting statement (on MySQL, INNODB_TRX does not list a
   * transaction that has only read so far).
   */
  async function waitForCacheVersionWait(database: string): Promise<void> {
    const waiting =
      testDatabase === 'postgres'
        ? "select count(*) as n from pg_stat_activity where datname = ? and wait_event_type = 'Lock' and query like 'update \"cache_versions\"%'"
        : "select count(*) as n from information_schema.processlist where db = ? and command = 'Query' and info like 'update `cache_versions`%'";
    await eventually(
      async () => (await countOf(waiting, [database])) > 0,
      20_000,
      'the request waiting for the lock the test holds',
    );
  }

  /** The deadlocks the server has resolved so far (PostgreSQL's count, of this database, is flushed within a second). */
  async function deadlocks(database: string): Promise<number> {
    if (testDatabase === 'postgres') {
      await db.raw('select pg_stat_clear_snapshot()');
      return countOf('select deadlocks as n from pg_stat_database where datname = ?', [database]);
    }
    const [rows] = (await db.raw("show global status like 'Innodb_deadlocks'")) as [Array<{ Value: string }>];
    return Number(rows[0].Value);
  }

  it('answers 200 and emits its webhook event once', async function () {
    this.timeout(60_000);
    const hook = await service.api.post('hooks', {
      json: { name: 'suspensions', events: ['User.SuspensionStatus.Updated'], config: { url: receiver.url } },
    });
    expect(hook.statusCode).to.equal(201);
    const created = await service.api.post('users', { json: { username: unique('user') } });
    const userId = created.body.id as string;

    let response: HttpResponse;
    if (testDatabase !== 'sqlite') {
      // A deadlock the request loses: the test's transaction holds the lock the request needs next
      // (the users cache version), then asks for the user row the request holds. The test's
      // transaction has written more, so MySQL rolls the request's back; PostgreSQL ends the one
      // that has waited a second (deadlock_timeout) first, the request's.
      const database = new URL(service.config.dbUrl).pathname.slice(1);
      const deadlocksBefore = await deadlocks(database);
      await db.schema.createTable('ballast', (table) => table.integer('n'));
      const trx = await db.transaction();
      try {
        await trx('ballast').insert(Array.from({ length: 200 }, (_, n) => ({ n })));
        await trx('cache_versions').where({ name: 'users' }).forUpdate().select('*');
        const pending = service.api.patch(`users/${userId}/is-suspended`, { json: { isSuspended: true } });
        await waitForCacheVersionWait(database);
        // Would throw a deadlock error were the test's transaction the one rolled back.
        await trx('users').where({ id: userId }).forUpdate().select('id');
        await trx.rollback();
        response = await pending;
      } finally {
        if (!trx.isCompleted()) {
          await trx.rollback();
        }
      }
      await eventually(async () => (await deadlocks(database)) > deadlocksBefore, 5_000, 'a deadlock provoked');
    } else {
      // Another process holds SQLite's write lock longer than the busy timeout (5 s): the request's
      // first try fails busy, a later one succeeds once the lock is let go.
      await service.api.get(`users/${userId}`);
      const holder = holdSqliteWriteLock(service.config.dbUrl.slice('sqlite:'.length), 6_000);
      await holder.locked;
      response = await service.api.patch(`users/${userId}/is-suspended`, { json: { isSuspended: true } });
      await holder.done;
    }
    expect(response.statusCode, JSON.stringify(response.body)).to.equal(200);
    expect(response.body.isSuspended).to.equal(true);

    await receiver.waitFor(1, 10_000);
    await sleep(200);
    const events = receiver.requests.map(
      (request) => JSON.parse(request.body) as { event: string; data: { id: string } },
    );
    expect(events.map((event) => [event.event, event.data.id])).to.deep.equal([
      ['User.SuspensionStatus.Updated', userId],
    ]);
    const rows = await db('hook_deliveries').where({ hook_id: hook.body.id });
    expect(rows).to.have.length(1);
  });
});
