import { expect } from 'chai';
import { generate } from 'otplib';

import { Browser } from '../experience/browser.ts';
import {
  createSpa,
  createUser,
  identify,
  latestCode,
  newEmail,
  openExperience,
  passwordVerification,
  redirectUri,
  sendCode,
  submitToApplication,
  verifyCode,
  verifyEmail,
  wrongCode,
} from '../experience/experience-helpers.ts';
import { expectError, expectStatus } from '../support/expect.ts';
import { startService, type TestService } from '../support/service.ts';
import { ifSet, unique } from '../support/values.ts';
import { type AuditEntry, waitForLog } from './support.ts';

const password = 'Quartz-Falcon-81';

describe('audit: failed sign-ins and verifications', () => {
  let service: TestService;
  let spa: { id: string };

  before(async () => {
    service = await startService();
    spa = await createSpa(service);
  });
  after(() => ifSet(service)?.stop());

  const about = (value: string) => (entry: AuditEntry) => entry.payload.identifier?.value === value;

  it('records a failed password sign-in: identifier, reason, address, user agent, application', async () => {
    const username = unique('fail');
    const user = await createUser(service, { username, password });
    const browser = await openExperience(service, spa.id);
    expectError(
      await passwordVerification(browser, { type: 'username', value: username }, 'Wrong-Password-1'),
      422,
      'session.invalid_credentials',
    );

    const entry = await waitForLog(
      service,
      { logKey: 'Interaction.SignIn.Verification.Password.Submit' },
      about(username),
    );
    expect(entry.payload).to.deep.include({
      result: 'Error',
      status: 422,
      error: { code: 'session.invalid_credentials' },
      identifier: { type: 'username', value: username },
      applicationId: spa.id,
    });
    expect(entry.payload.ip).to.match(/127\.0\.0\.1/);
    expect(entry.payload.userAgent).to.be.a('string').and.not.equal('');
    expect(entry.names[spa.id]).to.equal((await service.api.get(`applications/${spa.id}`)).body.name);

    // An identifier that matches no account is recorded the same way (probing shows).
    expectError(
      await passwordVerification(browser, { type: 'username', value: 'nobody_here' }, 'Wrong-Password-1'),
      422,
      'session.invalid_credentials',
    );
    await waitForLog(service, { result: 'Error' }, about('nobody_here'));

    // A success is not a failure: the sign-in is recorded once, at submit, as before.
    const verified = await passwordVerification(browser, { type: 'username', value: username }, password);
    expectStatus(verified, 200);
    expectStatus(await identify(browser, { verificationId: verified.body.verificationId }), 204);
    await submitToApplication(browser);
    await waitForLog(service, { logKey: 'Interaction.SignIn.Submit', userId: user.id }, () => true);
    const failures = (await service.api.get('logs', { searchParams: { result: 'Error', page_size: 100 } }))
      .body as AuditEntry[];
    expect(failures.filter(about(username))).to.have.length(1);
  });

  it('records a failed code verification and a lockout', async () => {
    const email = newEmail('code');
    await createUser(service, { primaryEmail: email, password });
    const browser = await openExperience(service, spa.id);
    const sent = await sendCode(browser, email, 'SignIn');
    expectStatus(sent, 200);
    const code = await latestCode(service, email);
    expectError(
      await verifyCode(browser, email, sent.body.verificationId, wrongCode(code)),
      400,
      'verification_code.code_mismatch',
    );
    const entry = await waitForLog(
      service,
      { logKey: 'Interaction.SignIn.Verification.EmailVerificationCode.Submit' },
      about(email),
    );
    expect(entry.payload).to.deep.include({
      result: 'Error',
      error: { code: 'verification_code.code_mismatch' },
      identifier: { type: 'email', value: email },
    });
    expect(entry.payload.ip).to.match(/127\.0\.0\.1/);

    expectStatus(
      await service.api.patch('sign-in-exp', { json: { sentinelPolicy: { maxAttempts: 2, lockoutDuration: 5 } } }),
      200,
    );
    try {
      const username = unique('lock');
      await createUser(service, { username, password });
      const locked = await openExperience(service, spa.id);
      for (let attempt = 0; attempt < 3; attempt++) {
        await passwordVerification(locked, { type: 'username', value: username }, 'Wrong-Password-1');
      }
      await waitForLog(
        service,
        { result: 'Error' },
        (candidate) =>
          about(username)(candidate) &&
          candidate.payload.error.code === 'session.verification_blocked_too_many_attempts',
      );
    } finally {
      await service.api.patch('sign-in-exp', { json: { sentinelPolicy: { maxAttempts: 10, lockoutDuration: 60 } } });
    }
  });

  it('records a refused sign-in identification: a suspended account signing in by code', async () => {
    const email = newEmail('suspended');
    const user = await createUser(service, { primaryEmail: email, password });
    expectStatus(await service.api.patch(`users/${user.id}/is-suspended`, { json: { isSuspended: true } }), 200);
    const browser = await openExperience(service, spa.id);
    const verificationId = await verifyEmail(service, browser, email, 'SignIn');
    expectError(await identify(browser, { verificationId }), 401, 'user.suspended');
    const entry = await waitForLog(service, { logKey: 'Interaction.SignIn.Identifier.Submit' }, about(email));
    expect(entry.payload).to.deep.include({
      result: 'Error',
      status: 401,
      error: { code: 'user.suspended' },
      identifier: { type: 'email', value: email },
      applicationId: spa.id,
    });
  });

  it('records a failed second factor, with the user it belongs to', async () => {
    expectStatus(
      await service.api.patch('sign-in-exp', {
        json: { mfa: { factors: ['Totp', 'BackupCode'], policy: 'UserControlled' } },
      }),
      200,
    );
    try {
      await failSecondFactor();
    } finally {
      await service.api.patch('sign-in-exp', { json: { mfa: { factors: [], policy: 'UserControlled' } } });
    }
  });

  async function failSecondFactor(): Promise<void> {
    const username = unique('mfa');
    const user = await createUser(service, { username, password });
    const identified = async () => {
      const browser = await openExperience(service, spa.id);
      const verification = await passwordVerification(browser, { type: 'username', value: username }, password);
      expectStatus(verification, 200);
      expectStatus(await identify(browser, { verificationId: verification.body.verificationId }), 204);
      return browser;
    };
    // Enrol an authenticator (and backup codes) in a first sign-in.
    const first = await identified();
    const started = await first.call('post', 'api/experience/verification/totp/secret');
    expectStatus(started, 200);
    const totp = await generate({ secret: started.body.secret });
    expectStatus(
      await first.call('post', 'api/experience/verification/totp/verify', {
        code: totp,
        verificationId: started.body.verificationId,
      }),
      200,
    );
    expectStatus(
      await first.call('post', 'api/experience/profile/mfa', {
        type: 'Totp',
        verificationId: started.body.verificationId,
      }),
      204,
    );
    const backup = await first.call('post', 'api/experience/verification/backup-code/generate');
    expectStatus(
      await first.call('post', 'api/experience/profile/mfa', {
        type: 'BackupCode',
        verificationId: backup.body.verificationId,
      }),
      204,
    );
    await submitToApplication(first);

    const second = await identified();
    expectError(
      await second.call('post', 'api/experience/verification/backup-code/verify', { code: 'not-a-backup-code' }),
      400,
      'session.mfa.invalid_backup_code',
    );
    const entry = await waitForLog(
      service,
      { logKey: 'Interaction.SignIn.Verification.BackupCode.Submit', userId: user.id },
      () => true,
    );
    expect(entry.payload).to.deep.include({
      result: 'Error',
      error: { code: 'session.mfa.invalid_backup_code' },
      userId: user.id,
      applicationId: spa.id,
    });
    expect(entry.names[user.id]).to.equal(username);
  }

  it('records a failed password verification in the Account API', async () => {
    const username = unique('acct');
    const user = await createUser(service, { username, password });
    const browser = new Browser(service);
    const { verifier } = await browser.authorize(spa.id, redirectUri);
    expectStatus(await browser.call('put', 'api/experience', { interactionEvent: 'SignIn' }), 204);
    const verification = await passwordVerification(browser, { type: 'username', value: username }, password);
    expectStatus(await identify(browser, { verificationId: verification.body.verificationId }), 204);
    const landed = await submitToApplication(browser);
    const tokens = await service.http.post('oidc/token', {
      form: {
        grant_type: 'authorization_code',
        code: landed.searchParams.get('code')!,
        code_verifier: verifier,
        client_id: spa.id,
        redirect_uri: redirectUri,
      },
    });
    const refused = await service.http.post('api/verifications/password', {
      json: { password: 'Wrong-Password-1' },
      headers: { authorization: `Bearer ${tokens.body.access_token}` },
    });
    expectError(refused, 422, 'session.invalid_credentials');
    const entry = await waitForLog(
      service,
      { logKey: 'Account.Verification.Password.Submit', userId: user.id },
      () => true,
    );
    expect(entry.payload).to.deep.include({
      result: 'Error',
      status: 422,
      error: { code: 'session.invalid_credentials' },
      userId: user.id,
      applicationId: spa.id,
    });
    expect(entry.payload.ip).to.match(/127\.0\.0\.1/);

    // Without a valid token nothing was verified: not recorded.
    expect(
      (
        await service.http.post('api/verifications/password', {
          json: { password: 'x' },
          headers: { authorization: 'Bearer nope' },
        })
      ).statusCode,
    ).to.equal(401);
  });
});
