import { createHash, randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { expect } from 'chai';
import type { Knex } from 'knex';

import { Browser } from '../experience/browser.ts';
import { createSpa, redirectUri } from '../experience/experience-helpers.ts';
import { openDatabase, placeholder, quotedName, refuseUpdates, testDatabase } from '../support/database.ts';
import { defaultSecretOf } from '../support/fixtures.ts';
import { startService, type TestService } from '../support/service.ts';
import { ifSet } from '../support/values.ts';

type LogLine = {
  level: number;
  msg: string;
  err?: { type: string; message: string; stack?: string; code?: string };
} & Record<string, unknown>;

const logLines = (service: TestService): LogLine[] =>
  service
    .logs()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as LogLine);

describe('secrets stay out of the log', () => {
  let service: TestService;
  let beside: Knex;

  before(async () => {
    service = await startService({ logs: true });
    beside = openDatabase(service.config.dbUrl);
  });

  after(async () => {
    await ifSet(beside)?.destroy();
    await ifSet(service)?.stop();
  });

  it('a failed statement is logged with placeholders and its error code, never its values (a client secret, a hook signing key)', async () => {
    const application = await service.api.post('applications', {
      json: { name: 'Leaky app', type: 'MachineToMachine' },
    });
    const clientSecret = await defaultSecretOf(service, application.body.id);
    expect(clientSecret.length).to.be.above(10);
    const hook = await service.api.post('hooks', {
      json: { name: 'Leaky hook', events: ['User.Created'], config: { url: 'http://127.0.0.1:9/hook' } },
    });
    expect(hook.statusCode).to.equal(201);
    const signingKey = String(hook.body.signingKey);

    await refuseUpdates(beside, 'applications');
    await refuseUpdates(beside, 'hooks');
    const marker = `marker-${randomBytes(6).toString('hex')}`;
    const failed = [
      await service.api.patch(`applications/${application.body.id}`, { json: { name: marker } }),
      await service.api.patch(`hooks/${hook.body.id}`, { json: { name: marker } }),
    ];
    expect(failed.map((response) => response.statusCode)).to.deep.equal([500, 500]);
    expect(failed[0].body).to.deep.equal({
      code: 'unknown',
      message: 'Internal server error.',
      logId: failed[0].body.logId,
    });

    const logged = logLines(service).filter((line) => line.msg === 'request failed');
    expect(logged).to.have.length(2);
    for (const [line, table] of [
      [logged[0], 'applications'],
      [logged[1], 'hooks'],
    ] as const) {
      expect(line.err!.code).to.be.a('string');
      expect(line.err!.message)
        .to.contain(`update ${quotedName(table)} set`)
        .and.to.contain(`= ${placeholder}`);
    }
    const text = service.logs();
    for (const secret of [clientSecret, signingKey, marker]) {
      expect(text).to.not.contain(secret);
    }
  });

  it("a constraint failure is logged without the value it quotes (MySQL's `Duplicate entry '...'`) or the statement's values", async () => {
    await beside.schema.createTable('leak_probe', (table) => table.string('v', 191).primary());
    // Each new interaction's id goes into the probe twice: the second insert breaks its key.
    if (testDatabase === 'postgres') {
      await beside.raw(
        'create function probe_models() returns trigger language plpgsql as $$ begin insert into leak_probe (v) values (new.id), (new.id); return new; end $$',
      );
    }
    await beside.raw(
      {
        mysql:
          'create trigger probe_models before insert on oidc_model_instances for each row insert into leak_probe (v) values (new.id), (new.id)',
        postgres:
          'create trigger probe_models before insert on oidc_model_instances for each row execute function probe_models()',
        sqlite:
          'create trigger probe_models before insert on oidc_model_instances begin insert into leak_probe (v) values (new.id), (new.id); end',
      }[testDatabase],
    );
    const { id: clientId } = await createSpa(service);
    const state = `state-${randomBytes(6).toString('hex')}`;
    const challenge = createHash('sha256').update(randomBytes(32).toString('base64url')).digest('base64url');
    const query = new URLSearchParams({
      client_id: clientId,
      redirect_uri: redirectUri,
      response_type: 'code',
      scope: 'openid',
      state,
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    const response = await new Browser(service).client.get(`oidc/auth?${query}`, { responseType: 'text' });
    expect(response.statusCode).to.equal(500);
    await beside.raw(
      testDatabase === 'postgres' ? 'drop trigger probe_models on oidc_model_instances' : 'drop trigger probe_models',
    );

    const failure = logLines(service).find((line) => line.msg === 'oidc server error');
    expect(failure?.err?.message).to.contain(`insert into ${quotedName('oidc_model_instances')}`);
    // PostgreSQL's unique_violation (23505) names the key's value only in its `detail`, which is not logged.
    expect(failure?.err?.code).to.match(/^(ER_DUP_ENTRY|SQLITE_CONSTRAINT_PRIMARYKEY|23505)$/);
    const text = service.logs();
    expect(text).to.not.contain('Duplicate entry');
    expect(text).to.not.contain('already exists.');
    expect(text).to.not.contain(state);
    expect(text).to.not.contain(challenge);
  });

  it("a request's log line does not hold the interaction uid of the path it resumes", async () => {
    const uid = 'ResumeUid0123456789abc';
    await service.http.get(`oidc/auth/${uid}`, { followRedirect: false });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const lines = logLines(service).filter(
      (line) => line.msg === 'request' && String(line.path).startsWith('/oidc/auth/'),
    );
    expect(lines.map((line) => line.path)).to.include('/oidc/auth/:uid');
    expect(service.logs()).not.to.include(uid);
  });

  it('a request that is not valid HTTP is logged by its parse error, never by its bytes', async () => {
    const token = `token-${randomBytes(12).toString('hex')}`;
    const password = `password-${randomBytes(12).toString('hex')}`;
    const body = JSON.stringify({ identifier: { type: 'username', value: 'someone' }, password });
    const raw =
      `POST /api/experience/verification/password HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nCookie: _interaction=${token}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${body.length}\r\nA header without a colon\r\n\r\n${body}`;
    const socket = connect(Number(new URL(service.url).port), '127.0.0.1');
    socket.write(raw);
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
    await new Promise((resolve) => socket.on('close', resolve));
    expect(answer.split('\r\n')[0]).to.equal('HTTP/1.1 400 Bad Request');

    const logged = logLines(service).find((line) => line.msg === 'malformed HTTP request');
    expect(logged?.err?.code).to.match(/^HPE_/);
    const text = service.logs();
    expect(text).to.not.contain(token);
    expect(text).to.not.contain(password);
    expect(text).to.not.contain('rawPacket');
  });
});

describe('one-time secrets at start', () => {
  it('generated admin credentials go out once, as one JSON line on the notices stream (stderr), never into the log nor on a restart', async () => {
    const env = {
      NODE_ENV: 'production',
      BOOTSTRAP_ADMIN_CLIENT_ID: '',
      BOOTSTRAP_ADMIN_CLIENT_SECRET: '',
      SMTP_URL: 'smtp://127.0.0.1:2525',
    };
    const first = await startService({ logs: true, env });
    let second: TestService | undefined;
    try {
      const lines = first.notices().trim().split('\n');
      const credentials = lines
        .map((line) => JSON.parse(line) as Record<string, unknown>)
        .filter((line) => 'clientSecret' in line);
      expect(credentials).to.have.length(1);
      expect(credentials[0]).to.include({ level: 40, scope: 'all', resource: first.config.managementApiResource });
      const secret = String(credentials[0].clientSecret);
      expect(first.notices().split(secret)).to.have.length(2);
      expect(first.logs()).to.not.contain(secret);
      const token = await first.token(String(credentials[0].clientId), secret, {
        grant_type: 'client_credentials',
        resource: first.config.managementApiResource,
        scope: 'all',
      });
      expect(token.statusCode).to.equal(200);

      second = await startService({ logs: true, dbUrl: first.config.dbUrl, env });
      expect(second.notices()).to.not.contain('clientSecret');
    } finally {
      await second?.stop();
      await first.stop();
    }
  });
});

describe('production without SMTP_URL', () => {
  let service: TestService;

  before(async () => {
    service = await startService({ logs: true, env: { NODE_ENV: 'production' } });
  });

  after(async () => {
    await ifSet(service)?.stop();
  });

  it('starts with a warning naming SMTP_URL', () => {
    const warnings = logLines(service).filter((line) => line.level === 40);
    expect(warnings.map((line) => line.msg).join('\n')).to.contain('SMTP_URL is not set');
  });

  it('keeps no verification code readable: sending one answers 501 connector.not_found and stores nothing', async () => {
    const response = await service.api.post('verification-codes', { json: { email: 'someone@example.com' } });
    expect(response.statusCode).to.equal(501);
    expect(response.body.code).to.equal('connector.not_found');
    const phone = await service.api.post('verification-codes', { json: { phone: '15551234567' } });
    expect(phone.statusCode).to.equal(501);

    const beside = openDatabase(service.config.dbUrl);
    try {
      expect(await beside('development_messages').count({ n: '*' }).first()).to.satisfy(
        (row: { n: number | string }) => Number(row.n) === 0,
      );
      expect(await beside('verification_codes').count({ n: '*' }).first()).to.satisfy(
        (row: { n: number | string }) => Number(row.n) === 0,
      );
    } finally {
      await beside.destroy();
    }
  });
});
