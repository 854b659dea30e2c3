import { expect } from 'chai';
import type { Knex } from 'knex';

import { openDatabase } from '../../lib/storage/database.ts';
import { freshDatabaseUrl } from '../support/database.ts';
import { expectError, expectStatus } from '../support/expect.ts';
import { HookEvents } from '../support/hook-events.ts';
import { startService, type TestService } from '../support/service.ts';
import { ifSet, unique } from '../support/values.ts';
import { Browser } from './browser.ts';
import {
  createSpa,
  createUser,
  type Identifier,
  identify,
  latestCode,
  newEmail,
  openExperience,
  passwordVerification,
  redirectUri,
  sendCode,
  type SignInSetting,
  signInWithPassword,
  startSignInSetting,
  submitToApplication,
  verifyCode,
  wrongCode,
} from './experience-helpers.ts';

const blocked = 'session.verification_blocked_too_many_attempts';
const password = 'Granite-Kestrel-64';

describe('experience API: identifier lockout (sentinel)', () => {
  let service: TestService;
  let db: Knex;
  let app: { id: string };
  before(async () => {
    service = await startService();
    db = openDatabase(service.config.dbUrl);
    app = await createSpa(service);
    const patched = await service.api.patch('sign-in-exp', {
      json: { sentinelPolicy: { maxAttempts: 3, lockoutDuration: 1 } },
    });
    expectStatus(patched, 200);
    expect(patched.body.sentinelPolicy).to.deep.equal({ maxAttempts: 3, lockoutDuration: 1 });
  });
  after(async () => {
    await ifSet(db)?.destroy();
    await ifSet(service)?.stop();
  });

  const wrong = (browser: Browser, identifier: Identifier) =>
    passwordVerification(browser, identifier, 'Not-The-Password-1');
  const unlock = (targets: string[]) =>
    service.api.post('sentinel-activities/delete', { json: { targetType: 'User', targets } });
  /** The sentinel's rows for one account or identifier (the target's exact form is the service's business). */
  const rowsFor = (value: string) => db('sentinel_activities').where('target', 'like', `%${value.toLowerCase()}`);

  it('locks after maxAttempts failures: 422, 422, then 400 even for the right password; an admin unlock lets it in', async () => {
    const username = unique('locked');
    await createUser(service, { username, password });
    const identifier: Identifier = { type: 'username', value: username };
    const browser = await openExperience(service, app.id);

    expectError(await wrong(browser, identifier), 422, 'session.invalid_credentials');
    expectError(await wrong(browser, identifier), 422, 'session.invalid_credentials');
    expectError(await wrong(browser, identifier), 400, blocked);
    expectError(await passwordVerification(browser, identifier, password), 400, blocked);
    // The lock is the identifier's, not the browser's.
    expectError(await signInWithPassword(service, app.id, identifier, password), 400, blocked);

    expectStatus(await unlock([username]), 204);
    expectStatus(await signInWithPassword(service, app.id, identifier, password), 200);
  });

  it('locks one identifier only', async () => {
    const victim = unique('victim');
    const bystander = unique('bystander');
    await createUser(service, { username: victim, password });
    await createUser(service, { username: bystander, password });
    const browser = await openExperience(service, app.id);
    for (let attempt = 0; attempt < 3; attempt++) {
      await wrong(browser, { type: 'username', value: victim });
    }
    expectError(await passwordVerification(browser, { type: 'username', value: victim }, password), 400, blocked);
    expectStatus(await passwordVerification(browser, { type: 'username', value: bystander }, password), 200);
  });

  it('resets the count on a success: 2 wrong, 1 right, 2 wrong are all answered normally', async () => {
    const username = unique('forgiven');
    await createUser(service, { username, password });
    const identifier: Identifier = { type: 'username', value: username };
    const browser = await openExperience(service, app.id);

    expectError(await wrong(browser, identifier), 422, 'session.invalid_credentials');
    expectError(await wrong(browser, identifier), 422, 'session.invalid_credentials');
    expectStatus(await passwordVerification(browser, identifier, password), 200);
    expectError(await wrong(browser, identifier), 422, 'session.invalid_credentials');
    expectError(await wrong(browser, identifier), 422, 'session.invalid_credentials');
    expectStatus(await passwordVerification(browser, identifier, password), 200);
    // A third consecutive failure still locks.
    expectError(await wrong(browser, identifier), 422, 'session.invalid_credentials');
    expectError(await wrong(browser, identifier), 422, 'session.invalid_credentials');
    expectError(await wrong(browser, identifier), 400, blocked);
  });

  it('locks an unknown identifier the same way after maxAttempts tries', async () => {
    const browser = await openExperience(service, app.id);
    for (const identifier of [
      { type: 'username', value: unique('ghost') },
      { type: 'email', value: newEmail('ghost') },
    ] satisfies Identifier[]) {
      expectError(await wrong(browser, identifier), 422, 'session.invalid_credentials');
      expectError(await wrong(browser, identifier), 422, 'session.invalid_credentials');
      expectError(await wrong(browser, identifier), 400, blocked);
      expectError(await wrong(browser, identifier), 400, blocked);
    }
  });

  it('counts wrong verification codes toward the same lock as wrong passwords for that email', async () => {
    const email = newEmail('mixed');
    await createUser(service, { primaryEmail: email, password });
    const identifier: Identifier = { type: 'email', value: email };
    const browser = await openExperience(service, app.id);

    expectError(await wrong(browser, identifier), 422, 'session.invalid_credentials');
    const sent = await sendCode(browser, email, 'SignIn');
    expectStatus(sent, 200);
    const code = await latestCode(service, email);
    expectError(
      await verifyCode(browser, email, sent.body.verificationId, wrongCode(code)),
      400,
      'verification_code.code_mismatch',
    );
    expectError(await verifyCode(browser, email, sent.body.verificationId, wrongCode(code)), 400, blocked);

    // Locked for every kind of proof, right ones included.
    expectError(await verifyCode(browser, email, sent.body.verificationId, code), 400, blocked);
    expectError(await passwordVerification(browser, identifier, password), 400, blocked);
    // Typed in another case, it is the same identifier.
    expectError(
      await passwordVerification(browser, { type: 'email', value: email.toUpperCase() }, password),
      400,
      blocked,
    );

    expectStatus(await unlock([email]), 204);
    expectStatus(await verifyCode(browser, email, sent.body.verificationId, code), 200);
  });

  it('counts wrong codes first, then a wrong password reaches the lock', async () => {
    const email = newEmail('codesfirst');
    await createUser(service, { primaryEmail: email, password });
    const browser = await openExperience(service, app.id);
    const sent = await sendCode(browser, email, 'SignIn');
    const code = await latestCode(service, email);
    expectError(
      await verifyCode(browser, email, sent.body.verificationId, wrongCode(code)),
      400,
      'verification_code.code_mismatch',
    );
    expectError(
      await verifyCode(browser, email, sent.body.verificationId, wrongCode(code)),
      400,
      'verification_code.code_mismatch',
    );
    expectError(await wrong(browser, { type: 'email', value: email }), 400, blocked);
  });

  it('ends the lock after lockoutDuration minutes', async () => {
    const username = unique('patient');
    const user = await createUser(service, { username, password });
    const identifier: Identifier = { type: 'username', value: username };
    const browser = await openExperience(service, app.id);
    for (let attempt = 0; attempt < 3; attempt++) {
      await wrong(browser, identifier);
    }
    const before = Date.now();
    const [row] = (await rowsFor(user.id)) as Array<{
      target: string;
      failures: number;
      locked_until: number | string | null;
    }>;
    expect(row, 'a sentinel row for the locked account').to.not.equal(undefined);
    // lockoutDuration is in minutes.
    expect(Number(row.locked_until)).to.be.within(before + 50_000, before + 61_000);
    expectError(await passwordVerification(browser, identifier, password), 400, blocked);

    await rowsFor(user.id).update({ locked_until: Date.now() - 1000 });
    expectStatus(await passwordVerification(browser, identifier, password), 200);
  });

  it('holds the lock against a burst of concurrent wrong passwords', async () => {
    const username = unique('burst');
    await createUser(service, { username, password });
    const identifier: Identifier = { type: 'username', value: username };
    const browser = await openExperience(service, app.id);
    const answers = await Promise.all(Array.from({ length: 8 }, () => wrong(browser, identifier)));
    const codes = answers.map((answer) => `${answer.statusCode} ${answer.body.code}`);
    // At most maxAttempts - 1 failures are answered as plain failures; the rest find the identifier locked.
    expect(codes.filter((code) => code === '422 session.invalid_credentials').length, codes.join(', ')).to.be.at.most(
      2,
    );
    expect(codes.filter((code) => code === `400 ${blocked}`).length, codes.join(', ')).to.be.at.least(6);
    expectError(await passwordVerification(browser, identifier, password), 400, blocked);
  });

  it('lets only an admin unlock, and validates the request', async () => {
    const anonymous = await service.http.post('api/sentinel-activities/delete', {
      json: { targetType: 'User', targets: ['someone'] },
    });
    expect(anonymous.statusCode).to.equal(401);
    expectError(
      await service.api.post('sentinel-activities/delete', { json: { targetType: 'User', targets: [] } }),
      400,
      'guard.invalid_input',
    );
    expectError(
      await service.api.post('sentinel-activities/delete', { json: { targetType: 'Robot', targets: ['x'] } }),
      400,
      'guard.invalid_input',
    );
    // Unlocking what is not locked is fine.
    expectStatus(await unlock([unique('free')]), 204);
  });
});

describe("experience API: the lock is the account's, whichever identifier is typed", () => {
  let setting: SignInSetting;
  let service: TestService;
  let events: HookEvents;
  let app: { id: string };
  before(async () => {
    setting = await startSignInSetting();
    ({ service, events, spa: app } = setting);
    expectStatus(
      await service.api.patch('sign-in-exp', { json: { sentinelPolicy: { maxAttempts: 3, lockoutDuration: 1 } } }),
      200,
    );
  });
  after(() => ifSet(setting)?.stop());

  const wrong = (browser: Browser, identifier: Identifier) =>
    passwordVerification(browser, identifier, 'Not-The-Password-1');
  const unlock = (targets: string[]) =>
    service.api.post('sentinel-activities/delete', { json: { targetType: 'User', targets } });
  const account = async (prefix: string) => {
    const username = unique(prefix);
    const email = newEmail(prefix);
    const user = await createUser(service, { username, primaryEmail: email, password });
    return {
      id: user.id,
      byUsername: { type: 'username', value: username } as Identifier,
      byEmail: { type: 'email', value: email } as Identifier,
    };
  };

  it("failures by username and by email add up: the one that reaches maxAttempts locks the account (the issue's 9 + 9)", async () => {
    const { byUsername, byEmail } = await account('spelled');
    const browser = await openExperience(service, app.id);
    expectError(await wrong(browser, byUsername), 422, 'session.invalid_credentials');
    expectError(await wrong(browser, byUsername), 422, 'session.invalid_credentials');
    expectError(await wrong(browser, byEmail), 400, blocked);
    expectError(await signInWithPassword(service, app.id, byEmail, password), 400, blocked);
    expectError(await signInWithPassword(service, app.id, byUsername, password), 400, blocked);
  });

  it('an account locked by username refuses sign-in by email, and by email code', async () => {
    const { byUsername, byEmail } = await account('byname');
    const browser = await openExperience(service, app.id);
    for (let attempt = 0; attempt < 3; attempt++) {
      await wrong(browser, byUsername);
    }
    expectError(await signInWithPassword(service, app.id, byEmail, password), 400, blocked);
    const sent = await sendCode(browser, byEmail.value, 'SignIn');
    expectStatus(sent, 200);
    expectError(
      await verifyCode(browser, byEmail.value, sent.body.verificationId, await latestCode(service, byEmail.value)),
      400,
      blocked,
    );
  });

  it('wrong email codes count toward the same account as wrong passwords by username', async () => {
    const { byUsername, byEmail } = await account('codes');
    const browser = await openExperience(service, app.id);
    expectError(await wrong(browser, byUsername), 422, 'session.invalid_credentials');
    const sent = await sendCode(browser, byEmail.value, 'SignIn');
    const code = await latestCode(service, byEmail.value);
    expectError(
      await verifyCode(browser, byEmail.value, sent.body.verificationId, wrongCode(code)),
      400,
      'verification_code.code_mismatch',
    );
    expectError(await verifyCode(browser, byEmail.value, sent.body.verificationId, wrongCode(code)), 400, blocked);
    expectError(await signInWithPassword(service, app.id, byUsername, password), 400, blocked);
  });

  it('identifiers that name no account are limited each on its own', async () => {
    const browser = await openExperience(service, app.id);
    const ghost: Identifier = { type: 'username', value: unique('ghost') };
    const otherGhost: Identifier = { type: 'email', value: newEmail('ghost') };
    expectError(await wrong(browser, ghost), 422, 'session.invalid_credentials');
    expectError(await wrong(browser, ghost), 422, 'session.invalid_credentials');
    expectError(await wrong(browser, otherGhost), 422, 'session.invalid_credentials');
    expectError(await wrong(browser, ghost), 400, blocked);
    expectError(await wrong(browser, ghost), 400, blocked);
    expectError(await wrong(browser, otherGhost), 422, 'session.invalid_credentials');
  });

  it('Identifier.Lockout names the identifier that tripped the lock, once', async () => {
    const { byUsername, byEmail } = await account('tripped');
    const browser = await openExperience(service, app.id);
    await events.expect([], async () => {
      expectError(await wrong(browser, byUsername), 422, 'session.invalid_credentials');
      expectError(await wrong(browser, byUsername), 422, 'session.invalid_credentials');
    });
    const { result, payloads } = await events.expect(['Identifier.Lockout'], () => wrong(browser, byEmail));
    expectError(result, 400, blocked);
    expect(payloads['Identifier.Lockout'][0]).to.include({ type: 'email', value: byEmail.value });
    await events.expect([], async () => {
      expectError(await wrong(browser, byUsername), 400, blocked);
      expectError(await passwordVerification(browser, byEmail, password), 400, blocked);
    });
  });

  it("an admin unlock by any of the account's identifiers, or its id, unlocks the account", async () => {
    for (const by of ['email', 'username', 'id'] as const) {
      const { id, byUsername, byEmail } = await account(`unlock${by}`);
      const browser = await openExperience(service, app.id);
      for (let attempt = 0; attempt < 3; attempt++) {
        await wrong(browser, byUsername);
      }
      expectError(await signInWithPassword(service, app.id, byEmail, password), 400, blocked);
      expectStatus(
        await unlock([by === 'email' ? byEmail.value.toUpperCase() : by === 'username' ? byUsername.value : id]),
        204,
      );
      expectStatus(await signInWithPassword(service, app.id, byEmail, password), 200);
      expectStatus(await signInWithPassword(service, app.id, byUsername, password), 200);
    }
  });

  it("the Account API's password check counts toward the same lock", async () => {
    const { byUsername, byEmail } = await account('account');
    const token = await accessToken(byUsername);
    const checkPassword = (value: string) =>
      service.http.post('api/verifications/password', {
        headers: { authorization: `Bearer ${token}` },
        json: { password: value },
      });
    expectError(await checkPassword('Not-The-Password-1'), 422, 'session.invalid_credentials');
    expectError(await wrong(await openExperience(service, app.id), byEmail), 422, 'session.invalid_credentials');
    expectError(await checkPassword('Not-The-Password-1'), 400, blocked);
    expectError(await checkPassword(password), 400, blocked);
    expectError(await signInWithPassword(service, app.id, byEmail, password), 400, blocked);
  });

  /** A signed-in user's access token for the Account API, through the real flow. */
  async function accessToken(identifier: Identifier): Promise<string> {
    const browser = new Browser(service);
    const { verifier } = await browser.authorize(app.id, redirectUri, { scope: 'openid' });
    expectStatus(await browser.call('put', 'api/experience', { interactionEvent: 'SignIn' }), 204);
    const verification = await passwordVerification(browser, identifier, password);
    expectStatus(await identify(browser, { verificationId: verification.body.verificationId }), 204);
    const landed = await submitToApplication(browser);
    const tokens = await service.http.post('oidc/token', {
      form: {
        grant_type: 'authorization_code',
        code: landed.searchParams.get('code')!,
        code_verifier: verifier,
        client_id: app.id,
        redirect_uri: redirectUri,
      },
    });
    expectStatus(tokens, 200);
    return String(tokens.body.access_token);
  }
});

describe("experience API: two instances share one account's lock", () => {
  let a: TestService;
  let b: TestService;
  let app: { id: string };
  before(async function () {
    this.timeout(180_000);
    const dbUrl = await freshDatabaseUrl();
    const env = { ENDPOINT: 'http://identity.test' };
    [a, b] = await Promise.all([startService({ dbUrl, env }), startService({ dbUrl, env })]);
    app = await createSpa(a);
    expectStatus(
      await a.api.patch('sign-in-exp', { json: { sentinelPolicy: { maxAttempts: 4, lockoutDuration: 1 } } }),
      200,
    );
  });
  after(() => Promise.all([ifSet(a)?.stop(), ifSet(b)?.stop()]));

  it('failures by username at one instance and by email at the other lock the account at both', async () => {
    const username = unique('split');
    const email = newEmail('split');
    await createUser(a, { username, primaryEmail: email, password });
    const atA = await openExperience(a, app.id);
    const atB = await openExperience(b, app.id);
    const wrongPassword = 'Not-The-Password-1';
    expectError(
      await passwordVerification(atA, { type: 'username', value: username }, wrongPassword),
      422,
      'session.invalid_credentials',
    );
    expectError(
      await passwordVerification(atB, { type: 'email', value: email }, wrongPassword),
      422,
      'session.invalid_credentials',
    );
    expectError(
      await passwordVerification(atA, { type: 'email', value: email }, wrongPassword),
      422,
      'session.invalid_credentials',
    );
    expectError(await passwordVerification(atB, { type: 'username', value: username }, wrongPassword), 400, blocked);
    expectError(await signInWithPassword(a, app.id, { type: 'email', value: email }, password), 400, blocked);
    expectError(await signInWithPassword(b, app.id, { type: 'username', value: username }, password), 400, blocked);
  });
});
