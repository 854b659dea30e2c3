import { expect } from 'chai';
import type { Knex } from 'knex';

import { openDatabase } from '../../lib/storage/database.ts';
import { startService, type TestService } from '../support/service.ts';
import type { Browser } from './browser.ts';
import {
  createSpa,
  createUser,
  expectError,
  expectStatus,
  latestCode,
  newEmail,
  newUsername,
  openExperience,
  passwordVerification,
  sendCode,
  signInWithPassword,
  verifyCode,
  wrongCode,
  type Identifier,
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
    const patched = await service.api.patch('sign-in-exp', { json: { sentinelPolicy: { maxAttempts: 3, lockoutDuration: 1 } } });
    expectStatus(patched, 200);
    expect(patched.body.sentinelPolicy).to.deep.equal({ maxAttempts: 3, lockoutDuration: 1 });
  });
  after(async () => {
    await db?.destroy();
    await service?.stop();
  });

  const wrong = (browser: Browser, identifier: Identifier) => passwordVerification(browser, identifier, 'Not-The-Password-1');
  const unlock = (targets: string[]) => service.api.post('sentinel-activities/delete', { json: { targetType: 'User', targets } });
  /** The sentinel's rows for one identifier (the target's exact form is the service's business). */
  const rowsFor = (value: string) => db('sentinel_activities').where('target', 'like', `%${value.toLowerCase()}`);

  it('locks after maxAttempts failures: 422, 422, then 400 even for the right password; an admin unlock lets it in', async () => {
    const username = newUsername('locked');
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
    const victim = newUsername('victim');
    const bystander = newUsername('bystander');
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
    const username = newUsername('forgiven');
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
      { type: 'username', value: newUsername('ghost') },
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
    expectError(await verifyCode(browser, email, sent.body.verificationId, wrongCode(code)), 400, 'verification_code.code_mismatch');
    expectError(await verifyCode(browser, email, sent.body.verificationId, wrongCode(code)), 400, blocked);

    // Locked for every kind of proof, right ones included.
    expectError(await verifyCode(browser, email, sent.body.verificationId, code), 400, blocked);
    expectError(await passwordVerification(browser, identifier, password), 400, blocked);
    // Typed in another case, it is the same identifier.
    expectError(await passwordVerification(browser, { type: 'email', value: email.toUpperCase() }, password), 400, blocked);

    expectStatus(await unlock([email]), 204);
    expectStatus(await verifyCode(browser, email, sent.body.verificationId, code), 200);
  });

  it('counts wrong codes first, then a wrong password reaches the lock', async () => {
    const email = newEmail('codesfirst');
    await createUser(service, { primaryEmail: email, password });
    const browser = await openExperience(service, app.id);
    const sent = await sendCode(browser, email, 'SignIn');
    const code = await latestCode(service, email);
    expectError(await verifyCode(browser, email, sent.body.verificationId, wrongCode(code)), 400, 'verification_code.code_mismatch');
    expectError(await verifyCode(browser, email, sent.body.verificationId, wrongCode(code)), 400, 'verification_code.code_mismatch');
    expectError(await wrong(browser, { type: 'email', value: email }), 400, blocked);
  });

  it('ends the lock after lockoutDuration minutes', async () => {
    const username = newUsername('patient');
    await createUser(service, { username, password });
    const identifier: Identifier = { type: 'username', value: username };
    const browser = await openExperience(service, app.id);
    for (let attempt = 0; attempt < 3; attempt++) {
      await wrong(browser, identifier);
    }
    const before = Date.now();
    const [row] = (await rowsFor(username)) as Array<{ target: string; failures: number; locked_until: number | string | null }>;
    expect(row, 'a sentinel row for the locked username').to.not.equal(undefined);
    // lockoutDuration is in minutes.
    expect(Number(row!.locked_until)).to.be.within(before + 50_000, before + 61_000);
    expectError(await passwordVerification(browser, identifier, password), 400, blocked);

    await rowsFor(username).update({ locked_until: Date.now() - 1000 });
    expectStatus(await passwordVerification(browser, identifier, password), 200);
  });

  it('holds the lock against a burst of concurrent wrong passwords', async () => {
    const username = newUsername('burst');
    await createUser(service, { username, password });
    const identifier: Identifier = { type: 'username', value: username };
    const browser = await openExperience(service, app.id);
    const answers = await Promise.all(Array.from({ length: 8 }, () => wrong(browser, identifier)));
    const codes = answers.map((answer) => `${answer.statusCode} ${answer.body.code}`);
    // At most maxAttempts - 1 failures are answered as plain failures; the rest find the identifier locked.
    expect(codes.filter((code) => code === '422 session.invalid_credentials').length, codes.join(', ')).to.be.at.most(2);
    expect(codes.filter((code) => code === `400 ${blocked}`).length, codes.join(', ')).to.be.at.least(6);
    expectError(await passwordVerification(browser, identifier, password), 400, blocked);
  });

  it('lets only an admin unlock, and validates the request', async () => {
    const anonymous = await service.http.post('api/sentinel-activities/delete', { json: { targetType: 'User', targets: ['someone'] } });
    expect(anonymous.statusCode).to.equal(401);
    expectError(await service.api.post('sentinel-activities/delete', { json: { targetType: 'User', targets: [] } }), 400, 'guard.invalid_input');
    expectError(await service.api.post('sentinel-activities/delete', { json: { targetType: 'Robot', targets: ['x'] } }), 400, 'guard.invalid_input');
    // Unlocking what is not locked is fine.
    expectStatus(await unlock([newUsername('free')]), 204);
  });
});
