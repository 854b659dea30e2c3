import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { expect } from 'chai';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { Webhook } from 'standardwebhooks';

import { loadConfig } from '../../lib/config/env.ts';
import { openDatabase } from '../../lib/storage/database.ts';
import { SecretBox } from '../../lib/storage/secret-box.ts';
import type { Browser } from '../experience/browser.ts';
import {
  createSpa,
  createUser,
  identify,
  openExperience,
  passwordVerification,
  submitToApplication,
} from '../experience/experience-helpers.ts';
import { Receiver } from '../hooks/receiver.ts';
import { builtScripts, production, useBuild } from '../support/build.ts';
import { freshDatabaseUrl } from '../support/database.ts';
import { expectStatus } from '../support/expect.ts';
import { createMachineWithScopes, createResource } from '../support/fixtures.ts';
import { createIdpUser, type Idp, type IdpUser, newState, signInAtIdp, startIdp } from '../support/idp.ts';
import { adminClient, freePort, startService, type TestService } from '../support/service.ts';
import { totp } from '../support/totp.ts';
import { ifSet, unique } from '../support/values.ts';

/**
 * Secrets at rest (issue 12, point 9): with SECRETS_ENCRYPTION_KEY set, a copy of the database holds
 * no private key, client secret, hook signing key or TOTP secret in the clear; everything still
 * works; keys rotate with `npm run cli -- rotate-secrets`.
 */

const newKey = () => randomBytes(32).toString('base64');
/** The key id in a sealed value: computed here independently, as the docs describe it. */
const keyIdOf = (key: string) =>
  createHash('sha256').update(Buffer.from(key, 'base64')).digest().subarray(0, 8).toString('base64url');
const sealedShape = /^enc:v1:([\w-]{11}):[\w-]{16}:[\w-]{22,}$/;

const password = 'Granite-Kestrel-64';

type Stored = { rows: string; values: Array<{ place: string; value: string }> };

/** Every row of the tables holding secrets, as a database dump would show them. */
async function readDatabase(dbUrl: string): Promise<Stored> {
  const db = openDatabase(dbUrl);
  try {
    const tables = [
      'oidc_keys',
      'applications',
      'application_secrets',
      'hooks',
      'user_mfa_verifications',
      'social_connectors',
      'sso_connectors',
    ];
    const dump: Record<string, unknown[]> = {};
    for (const table of tables) {
      dump[table] = await db(table).select('*');
    }
    const values: Stored['values'] = [];
    const add = (
      table: string,
      column: string,
      rows: unknown[],
      pick: (row: Record<string, string>) => unknown = (row) => row[column],
    ) => {
      for (const row of rows as Array<Record<string, string>>) {
        const value = pick(row);
        if (typeof value === 'string') {
          values.push({ place: `${table}.${column}:${row.id}`, value });
        }
      }
    };
    add('oidc_keys', 'value', dump.oidc_keys);
    add(
      'applications',
      'secret',
      dump.applications.filter((row) => (row as { id: string }).id !== 'console'),
    );
    add('application_secrets', 'value', dump.application_secrets);
    add('hooks', 'signing_key', dump.hooks);
    add('user_mfa_verifications', 'secret', dump.user_mfa_verifications);
    for (const table of ['social_connectors', 'sso_connectors']) {
      add(table, 'config', dump[table], (row) => (JSON.parse(row.config) as { clientSecret?: string }).clientSecret);
    }
    return { rows: JSON.stringify(dump), values };
  } finally {
    await db.destroy();
  }
}

async function recordedKeyIds(dbUrl: string): Promise<string[]> {
  const db = openDatabase(dbUrl);
  try {
    return ((await db('secret_keys').pluck('id')) as string[]).sort();
  } finally {
    await db.destroy();
  }
}

/** This process's environment without any SECRETS_ENCRYPTION_* of its own, and `env`. */
const environment = (env: Record<string, string>) => ({
  ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('SECRETS_'))),
  ...env,
});

/** Runs `npm run cli -- rotate-secrets` as an operator would. */
async function rotateSecrets(env: Record<string, string>): Promise<{ code: number; output: string }> {
  const child = spawn(process.execPath, [builtScripts.cli, 'rotate-secrets'], {
    env: environment(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const [code] = (await once(child, 'exit')) as [number];
  return { code, output };
}

/** The built service (`node dist/lib/main.js`) until it says it started or exits: its output and exit code (null: still running, now stopped). */
async function runMain(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, [builtScripts.service], {
    // SMTP_URL: production may insist on one; nothing is sent.
    env: environment({
      ...production,
      LOG_LEVEL: 'info',
      PORT: String(await freePort()),
      SMTP_URL: 'smtp://127.0.0.1:2525',
      ...env,
    }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = once(child, 'exit').then(([code]) => code as number);
  const started = new Promise<void>((resolve) => {
    const read = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('identity service started')) {
        resolve();
      }
    };
    child.stdout.on('data', read);
    child.stderr.on('data', read);
  });
  const code = await Promise.race([exited, started.then(() => null)]);
  if (code === null) {
    child.kill('SIGTERM');
    await exited;
  }
  return { code, output };
}

/** What each kind of secret protects, made through the API. */
type World = {
  /** `namedSecret`: one of its application secrets (`/applications/:id/secrets`). */
  machine: { id: string; secret: string; namedSecret: string; indicator: string };
  hook: { id: string; signingKey: string };
  /** One per check (a TOTP code is accepted once per time step); `checks` counts those used. */
  totpUsers: Array<{ username: string; secret: string }>;
  checks: number;
  social: { id: string; secret: string };
  sso: { id: string; secret: string };
};

describe('secrets at rest (SECRETS_ENCRYPTION_KEY)', function () {
  useBuild();
  let idp: Idp;
  let idpUser: IdpUser;
  let receiver: Receiver;
  const callback = (service: TestService) => `${service.url}/callback/social`;

  before(async () => {
    // The IdP sends the browser back to whichever port the service under test has: any callback.
    idp = await startIdp([]);
    idpUser = await createIdpUser(idp, `secrets_${Date.now().toString(36)}@example.com`);
    receiver = await Receiver.start();
  });
  after(async () => {
    await ifSet(receiver)?.close();
    await ifSet(idp)?.stop();
  });

  async function allowCallback(service: TestService): Promise<void> {
    const application = (await idp.service.api.get(`applications/${idp.client.id}`)).body;
    const redirectUris = [...application.oidcClientMetadata.redirectUris, callback(service)];
    expectStatus(
      await idp.service.api.patch(`applications/${idp.client.id}`, {
        json: { oidcClientMetadata: { ...application.oidcClientMetadata, redirectUris } },
      }),
      200,
    );
  }

  async function enrolTotp(service: TestService, spa: { id: string }): Promise<{ username: string; secret: string }> {
    const username = unique('sealed');
    await createUser(service, { username, password });
    const browser = await identified(service, spa, username);
    const started = await browser.call('post', 'api/experience/verification/totp/secret');
    expectStatus(started, 200);
    const { secret, verificationId } = started.body;
    expectStatus(
      await browser.call('post', 'api/experience/verification/totp/verify', {
        code: await totp(secret),
        verificationId,
      }),
      200,
    );
    expectStatus(await browser.call('post', 'api/experience/profile/mfa', { type: 'Totp', verificationId }), 204);
    const backup = await browser.call('post', 'api/experience/verification/backup-code/generate');
    expectStatus(
      await browser.call('post', 'api/experience/profile/mfa', {
        type: 'BackupCode',
        verificationId: backup.body.verificationId,
      }),
      204,
    );
    await submitToApplication(browser);
    return { username, secret };
  }

  async function identified(service: TestService, spa: { id: string }, username: string): Promise<Browser> {
    const browser = await openExperience(service, spa.id);
    const verification = await passwordVerification(browser, { type: 'username', value: username }, password);
    expectStatus(verification, 200);
    expectStatus(await identify(browser, { verificationId: verification.body.verificationId }), 204);
    return browser;
  }

  async function createWorld(service: TestService): Promise<World> {
    const { resource, scopeIds } = await createResource(service, ['read']);
    const { application } = await createMachineWithScopes(service, [scopeIds.read]);
    const named = await service.api.post(`applications/${application.id}/secrets`, { json: { name: 'sealed' } });
    expectStatus(named, 201);
    const hook = await service.api.post('hooks', {
      json: { name: 'sealed', events: ['User.Created'], config: { url: receiver.url } },
    });
    expectStatus(hook, 201);
    expectStatus(
      await service.api.patch('sign-in-exp', {
        json: { mfa: { factors: ['Totp', 'BackupCode'], policy: 'UserControlled' } },
      }),
      200,
    );
    const spa = await createSpa(service);
    const totpUsers = [];
    for (let index = 0; index < 3; index++) {
      totpUsers.push(await enrolTotp(service, spa));
    }
    const social = await service.api.post('connectors', {
      json: {
        connectorId: 'oidc',
        config: { issuer: idp.issuer, clientId: idp.client.id, clientSecret: idp.client.secret },
        metadata: { target: `sealed-${Date.now().toString(36)}` },
      },
    });
    expectStatus(social, 200);
    const ssoSecret = `sso-secret-${randomBytes(12).toString('hex')}`;
    const sso = await service.api.post('sso-connectors', {
      json: {
        providerName: 'OIDC',
        connectorName: `Sealed ${Date.now().toString(36)}`,
        config: { issuer: 'https://login.corp.example/oidc', clientId: 'sso-client', clientSecret: ssoSecret },
      },
    });
    expectStatus(sso, 200);
    return {
      machine: {
        id: application.id,
        secret: application.secret,
        namedSecret: named.body.value,
        indicator: resource.indicator,
      },
      hook: { id: hook.body.id, signingKey: hook.body.signingKey },
      totpUsers,
      checks: 0,
      social: { id: social.body.id, secret: idp.client.secret },
      sso: { id: sso.body.id, secret: ssoSecret },
    };
  }

  /** Everything a secret is for still works: tokens, webhook signatures, TOTP, connectors' client authentication. */
  async function expectWorking(service: TestService, world: World): Promise<void> {
    const token = await service.token(world.machine.id, world.machine.secret, {
      grant_type: 'client_credentials',
      resource: world.machine.indicator,
      scope: 'read',
    });
    expect(token.statusCode, JSON.stringify(token.body)).to.equal(200);
    const jwks = createRemoteJWKSet(new URL(`${service.url}/oidc/jwks`));
    const { payload } = await jwtVerify(String(token.body.access_token), jwks, {
      issuer: service.config.issuer,
      audience: world.machine.indicator,
    });
    expect(payload.scope).to.equal('read');
    const named = await service.token(world.machine.id, world.machine.namedSecret, {
      grant_type: 'client_credentials',
      resource: world.machine.indicator,
      scope: 'read',
    });
    expect(named.statusCode, JSON.stringify(named.body)).to.equal(200);
    // The bootstrap admin's secret and the management API (tokens we signed, verified by us).
    expectStatus(await service.api.get(`hooks/${world.hook.id}`), 200);

    const request = await deliveryOf(await createUser(service, { username: unique('hooked') }));
    new Webhook(`whsec_${Buffer.from(world.hook.signingKey).toString('base64')}`).verify(
      request.body,
      request.headers as Record<string, string>,
    );

    const user = world.totpUsers[world.checks++];
    const spa = await createSpa(service);
    const browser = await identified(service, spa, user.username);
    expectStatus(
      await browser.call('post', 'api/experience/verification/totp/verify', { code: await totp(user.secret, 1) }),
      200,
    );
    await submitToApplication(browser);

    // The IdP answers our token request only if the connector's client secret is right.
    await allowCallback(service);
    const social = await openExperience(service, spa.id);
    const state = newState();
    const started = await social.call(
      'post',
      `api/experience/verification/social/${world.social.id}/authorization-uri`,
      { state, redirectUri: callback(service) },
    );
    expectStatus(started, 200);
    const back = await signInAtIdp(idp, started.body.authorizationUri, idpUser);
    const verified = await social.call('post', `api/experience/verification/social/${world.social.id}/verify`, {
      connectorData: Object.fromEntries(back.searchParams),
      verificationId: started.body.verificationId,
    });
    expectStatus(verified, 200);
    // Masks end like the secret: the stored one was opened.
    expect((await service.api.get(`connectors/${world.social.id}`)).body.config.clientSecret).to.match(
      new RegExp(`${world.social.secret.slice(-4)}$`),
    );
    expect((await service.api.get(`sso-connectors/${world.sso.id}`)).body.config.clientSecret).to.match(
      new RegExp(`${world.sso.secret.slice(-4)}$`),
    );
  }

  /** The webhook delivery of the User.Created event of `user` (deliveries of earlier users may arrive first). */
  async function deliveryOf(user: { id: string }) {
    for (let seen = 0; ; seen++) {
      const request = (await receiver.waitFor(seen + 1))[seen];
      if (request.body.includes(user.id)) {
        return request;
      }
    }
  }

  function expectNoPlaintext(stored: Stored, world: World): void {
    for (const secret of [
      adminClient.secret,
      world.machine.secret,
      world.machine.namedSecret,
      world.hook.signingKey,
      world.social.secret,
      world.sso.secret,
      ...world.totpUsers.map((user) => user.secret),
    ]) {
      expect(stored.rows).to.not.include(secret);
    }
    // Private JWKs' private parts.
    expect(stored.rows).to.not.include('"d":');
    expect(stored.rows).to.not.include('\\"d\\":');
  }

  const keyIdsIn = (stored: Stored) => [
    ...new Set(stored.values.map(({ value }) => sealedShape.exec(value)?.[1] ?? 'plaintext')),
  ];

  it('stores every secret encrypted, and everything still works', async () => {
    const key = newKey();
    const dbUrl = await freshDatabaseUrl();
    const service = await startService({ dbUrl, env: { SECRETS_ENCRYPTION_KEY: key } });
    try {
      const world = await createWorld(service);
      await expectWorking(service, world);
      const stored = await readDatabase(dbUrl);
      expectNoPlaintext(stored, world);
      // Two signing keys and a cookie key, the bootstrap admin, the machine and its named secret, the SPAs, the hook, 3 TOTP factors, 2 connectors.
      expect(stored.values.length).to.be.at.least(14);
      expect(stored.values.map(({ place }) => place)).to.satisfy((places: string[]) =>
        places.some((place) => place.startsWith('application_secrets.value:')),
      );
      expect(keyIdsIn(stored)).to.deep.equal([keyIdOf(key)]);
      expect(await recordedKeyIds(dbUrl)).to.deep.equal([keyIdOf(key)]);
    } finally {
      await service.stop();
    }
  });

  it('keeps a TOTP secret and backup codes being enrolled sealed until the enrolment is submitted', async () => {
    const service = await startService({ env: { SECRETS_ENCRYPTION_KEY: newKey() } });
    const db = openDatabase(service.config.dbUrl);
    try {
      expectStatus(
        await service.api.patch('sign-in-exp', {
          json: { mfa: { factors: ['Totp', 'BackupCode'], policy: 'UserControlled' } },
        }),
        200,
      );
      const spa = await createSpa(service);
      const username = unique('pending');
      await createUser(service, { username, password });
      const browser = await identified(service, spa, username);
      const started = await browser.call('post', 'api/experience/verification/totp/secret');
      expectStatus(started, 200);
      const backup = await browser.call('post', 'api/experience/verification/backup-code/generate');
      expectStatus(backup, 200);
      const states = JSON.stringify(await db('experience_states').select('state'));
      expect(states).to.not.include(started.body.secret);
      for (const code of backup.body.codes as string[]) {
        expect(states).to.not.include(code);
      }

      // The enrolment goes on from the sealed state.
      const { secret, verificationId } = started.body;
      expectStatus(
        await browser.call('post', 'api/experience/verification/totp/verify', {
          code: await totp(secret),
          verificationId,
        }),
        200,
      );
      expectStatus(await browser.call('post', 'api/experience/profile/mfa', { type: 'Totp', verificationId }), 204);
      expectStatus(
        await browser.call('post', 'api/experience/profile/mfa', {
          type: 'BackupCode',
          verificationId: backup.body.verificationId,
        }),
        204,
      );
      await submitToApplication(browser);
    } finally {
      await db.destroy();
      await service.stop();
    }
  });

  it('rotates: old values stay readable under a new key, rotate-secrets re-encrypts them all, then the old key is not needed', async () => {
    const [keyA, keyB] = [newKey(), newKey()];
    const dbUrl = await freshDatabaseUrl();
    let service = await startService({ dbUrl, env: { SECRETS_ENCRYPTION_KEY: keyA } });
    const world = await createWorld(service);
    await service.stop();

    // Without the key the database needs, start-up stops with a line naming the setting.
    for (const env of [{}, { SECRETS_ENCRYPTION_KEY: keyB }] as Array<Record<string, string>>) {
      const refused = await startService({ dbUrl, env }).then(
        (started) => started.stop().then(() => 'started'),
        (error: unknown) => (error instanceof Error ? error.message : String(error)),
      );
      expect(refused).to.include('SECRETS_ENCRYPTION_KEY').and.include(keyIdOf(keyA)).and.not.include(keyA);
    }

    service = await startService({ dbUrl, env: { SECRETS_ENCRYPTION_KEY: keyB, SECRETS_ENCRYPTION_OLD_KEYS: keyA } });
    try {
      await expectWorking(service, world);
      // New values are sealed with the new key; old ones are still under the old key.
      expect(keyIdsIn(await readDatabase(dbUrl)).sort()).to.deep.equal([keyIdOf(keyA), keyIdOf(keyB)].sort());

      // Beside the running instance, as an operator rotates.
      const rotated = await rotateSecrets({
        DB_URL: dbUrl,
        SECRETS_ENCRYPTION_KEY: keyB,
        SECRETS_ENCRYPTION_OLD_KEYS: keyA,
      });
      expect(rotated.code, rotated.output).to.equal(0);
      expect(rotated.output)
        .to.include(keyIdOf(keyB))
        .and.include(keyIdOf(keyA))
        .and.not.include(keyA)
        .and.not.include(keyB);
      const stored = await readDatabase(dbUrl);
      expect(keyIdsIn(stored)).to.deep.equal([keyIdOf(keyB)]);
      expect(await recordedKeyIds(dbUrl)).to.deep.equal([keyIdOf(keyB)]);
      await expectWorking(service, world);
    } finally {
      await service.stop();
    }

    service = await startService({ dbUrl, env: { SECRETS_ENCRYPTION_KEY: keyB } });
    try {
      await expectWorking(service, world);
    } finally {
      await service.stop();
    }
    const refused = await startService({ dbUrl, env: { SECRETS_ENCRYPTION_KEY: keyA } }).then(
      (started) => started.stop().then(() => 'started'),
      (error: unknown) => (error instanceof Error ? error.message : String(error)),
    );
    expect(refused).to.include('SECRETS_ENCRYPTION_KEY').and.include(keyIdOf(keyB));
  });

  it('a database from before the key keeps working once it is set; rotate-secrets encrypts what was plaintext', async () => {
    const dbUrl = await freshDatabaseUrl();
    let service = await startService({ dbUrl });
    const world = await createWorld(service);
    await service.stop();
    const before = await readDatabase(dbUrl);
    expect(before.rows).to.include(world.hook.signingKey);
    expect(keyIdsIn(before)).to.deep.equal(['plaintext']);

    const key = newKey();
    service = await startService({ dbUrl, env: { SECRETS_ENCRYPTION_KEY: key } });
    try {
      await expectWorking(service, world);
      const rotated = await rotateSecrets({ DB_URL: dbUrl, SECRETS_ENCRYPTION_KEY: key });
      expect(rotated.code, rotated.output).to.equal(0);
    } finally {
      await service.stop();
    }
    const stored = await readDatabase(dbUrl);
    expectNoPlaintext(stored, world);
    expect(keyIdsIn(stored)).to.deep.equal([keyIdOf(key)]);

    service = await startService({ dbUrl, env: { SECRETS_ENCRYPTION_KEY: key } });
    try {
      await expectWorking(service, world);
    } finally {
      await service.stop();
    }

    // And back: with the key only among the old ones, rotate-secrets writes plaintext again.
    const decrypted = await rotateSecrets({ DB_URL: dbUrl, SECRETS_ENCRYPTION_OLD_KEYS: key });
    expect(decrypted.code, decrypted.output).to.equal(0);
    expect(keyIdsIn(await readDatabase(dbUrl))).to.deep.equal(['plaintext']);
    expect(await recordedKeyIds(dbUrl)).to.deep.equal([]);
    service = await startService({ dbUrl });
    try {
      await expectWorking(service, world);
    } finally {
      await service.stop();
    }
  });

  it('a 256-character client secret fits once encrypted (MySQL columns are widened)', async () => {
    const secret = randomBytes(192).toString('base64url');
    const service = await startService({
      env: {
        SECRETS_ENCRYPTION_KEY: newKey(),
        BOOTSTRAP_ADMIN_CLIENT_ID: 'long-secret-admin',
        BOOTSTRAP_ADMIN_CLIENT_SECRET: secret,
      },
    });
    try {
      expect(secret).to.have.length(256);
      const token = await service.token('long-secret-admin', secret, {
        grant_type: 'client_credentials',
        resource: service.config.managementApiResource,
        scope: 'all',
      });
      expect(token.statusCode, JSON.stringify(token.body)).to.equal(200);
    } finally {
      await service.stop();
    }
  });

  it('the process refuses to start without the key the database needs: one line naming the setting, exit 1', async () => {
    const key = newKey();
    const sealed = await freshDatabaseUrl();
    const withKey = await runMain({ DB_URL: sealed, SECRETS_ENCRYPTION_KEY: key });
    expect(withKey.code, withKey.output).to.equal(null);
    expect(withKey.output).to.not.include('SECRETS_ENCRYPTION_KEY');

    const without = await runMain({ DB_URL: sealed });
    expect(without.code).to.equal(1);
    // One line, no stack trace (beside the production log's warning that no key is set, a JSON log line).
    expect(
      without.output.split('\n').filter((line) => line.includes('SECRETS_ENCRYPTION_KEY') && !line.startsWith('{')),
    ).to.have.length(1);
    expect(without.output).to.not.match(/^\s+at /m);
    expect(without.output).to.include(keyIdOf(key)).and.not.include(key);
  });

  it('the process warns at start in production without a key', async () => {
    const plaintext = await runMain({ DB_URL: await freshDatabaseUrl() });
    expect(plaintext.code, plaintext.output).to.equal(null);
    const warning = plaintext.output.split('\n').find((line) => line.includes('SECRETS_ENCRYPTION_KEY'));
    expect(JSON.parse(warning!)).to.include({ level: 40 });
  });

  it('a key that is not 32 bytes of base64 stops the start, naming the variable and not the value', () => {
    for (const env of [
      { SECRETS_ENCRYPTION_KEY: 'too-short' },
      { SECRETS_ENCRYPTION_OLD_KEYS: `${newKey()},${randomBytes(16).toString('base64')}` },
    ]) {
      const value = Object.values(env)[0]!;
      expect(() => loadConfig(env))
        .to.throw(new RegExp(Object.keys(env)[0]))
        .with.property('message')
        .that.does.not.include(value);
    }
    expect(loadConfig({ SECRETS_ENCRYPTION_KEY: newKey().replace(/=$/, '') }).secretKeys.current).to.have.length(32);
  });

  it('a sealed value opens only where it was stored (its table, column and row are bound in)', () => {
    const box = new SecretBox({ current: randomBytes(32), old: [] });
    const sealed = box.seal('the secret', 'applications.secret:app-1');
    expect(sealed).to.match(sealedShape);
    expect(box.seal('the secret', 'applications.secret:app-1')).to.not.equal(sealed);
    expect(box.open(sealed, 'applications.secret:app-1')).to.equal('the secret');
    expect(() => box.open(sealed, 'applications.secret:app-2')).to.throw(/applications\.secret:app-2/);
    expect(() =>
      box.open(sealed.slice(0, -2) + (sealed.endsWith('AA') ? 'AB' : 'AA'), 'applications.secret:app-1'),
    ).to.throw();
    expect(() => new SecretBox({ old: [] }).open(sealed, 'applications.secret:app-1')).to.throw(
      /SECRETS_ENCRYPTION_KEY/,
    );
  });
});
