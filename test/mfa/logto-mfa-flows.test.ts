import { expect } from 'chai';

import type { Browser } from '../experience/browser.ts';
import {
  createUser,
  identify,
  newEmail,
  openExperience,
  passwordVerification,
  type SignInSetting,
  startSignInSetting,
  submitToApplication,
  verifyEmail,
} from '../experience/experience-helpers.ts';
import { expectError, expectStatus } from '../support/expect.ts';
import type { TestService } from '../support/service.ts';
import { totp } from '../support/totp.ts';
import { ifSet, unique } from '../support/values.ts';

/**
 * Binding second factors as Logto's integration tests expect (`bind-mfa/*`, `verifications/totp-*`,
 * `backup-code-*`): what is made while a factor is off and refused at binding, the guards of
 * `POST /api/experience/profile/mfa` in Logto's order, email and phone codes bound as factors, and
 * the two suggestions (`user.suggest_mfa`, `session.mfa.suggest_additional_mfa`).
 */

const password = 'Granite-Kestrel-64';
const usernameSignIn = {
  signUp: { identifiers: ['username'], password: true, verify: false },
  signIn: { methods: [{ identifier: 'username', password: true, verificationCode: false, isPasswordPrimary: true }] },
};
const emailSignUp = {
  signUp: { identifiers: ['email'], password: true, verify: true },
  signIn: { methods: [{ identifier: 'email', password: true, verificationCode: false, isPasswordPrimary: true }] },
};

describe("Binding second factors as in Logto's Experience API", () => {
  let setting: SignInSetting;
  let service: TestService;
  let spa: { id: string };

  before(async () => {
    setting = await startSignInSetting();
    ({ service, spa } = setting);
  });
  after(() => ifSet(setting)?.stop());

  async function settle(json: Record<string, unknown>): Promise<void> {
    expectStatus(await service.api.patch('sign-in-exp', { json: { ...usernameSignIn, ...json } }), 200);
  }

  /** A new user's browser, identified by password (submit not yet called); and the password record's id. */
  async function identified(): Promise<{ browser: Browser; passwordRecord: string; userId: string }> {
    const username = unique('bind');
    const user = await createUser(service, { username, password });
    const browser = await openExperience(service, spa.id);
    const verification = await passwordVerification(browser, { type: 'username', value: username }, password);
    expectStatus(verification, 200);
    expectStatus(await identify(browser, { verificationId: verification.body.verificationId }), 204);
    return { browser, passwordRecord: verification.body.verificationId, userId: user.id };
  }

  /** A TOTP enrolment proven in `browser`: the record to bind. */
  async function provenTotp(browser: Browser): Promise<string> {
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
    return verificationId;
  }

  const bind = (browser: Browser, type: string, verificationId: string) =>
    browser.call('post', 'api/experience/profile/mfa', { type, verificationId });

  it('makes TOTP secrets and backup codes while the factor is off, and refuses them at binding', async () => {
    await settle({ mfa: { factors: [], policy: 'PromptAtSignInAndSignUp' } });
    const { browser } = await identified();
    const enrolment = await provenTotp(browser);
    expectError(await bind(browser, 'Totp', enrolment), 400, 'session.mfa.mfa_factor_not_enabled');
    const codes = await browser.call('post', 'api/experience/verification/backup-code/generate');
    expectStatus(codes, 200);
    expect(codes.body.codes).to.have.length(10);
    expectError(
      await bind(browser, 'BackupCode', codes.body.verificationId),
      400,
      'session.mfa.mfa_factor_not_enabled',
    );
    await submitToApplication(browser);
  });

  it("answers Logto's verification codes: another record, no factor, a wrong code", async () => {
    await settle({ mfa: { factors: ['Totp', 'BackupCode'], policy: 'PromptAtSignInAndSignUp' } });
    const { browser, passwordRecord } = await identified();
    expectError(
      await browser.call('post', 'api/experience/verification/totp/verify', { code: '123456', verificationId: 'none' }),
      404,
      'session.verification_session_not_found',
    );
    expectError(
      await browser.call('post', 'api/experience/verification/totp/verify', {
        code: '123456',
        verificationId: passwordRecord,
      }),
      404,
      'session.verification_session_not_found',
    );
    // The account has neither factor: a code for it is simply wrong.
    expectError(
      await browser.call('post', 'api/experience/verification/totp/verify', { code: '123456' }),
      400,
      'session.mfa.invalid_totp_code',
    );
    expectError(
      await browser.call('post', 'api/experience/verification/backup-code/verify', { code: '0123456789' }),
      400,
      'session.mfa.invalid_backup_code',
    );
    expectError(await bind(browser, 'Totp', passwordRecord), 404, 'session.verification_session_not_found');
  });

  it('guards binding and declining: no password reset (400), identified first (404)', async () => {
    await settle({ mfa: { factors: ['Totp'], policy: 'Mandatory' } });
    const reset = await openExperience(service, spa.id, 'ForgotPassword');
    expectError(
      await reset.call('post', 'api/experience/profile/mfa/mfa-skipped'),
      400,
      'session.not_supported_for_forgot_password',
    );
    expectError(await bind(reset, 'Totp', 'dummy'), 400, 'session.not_supported_for_forgot_password');
    const anonymous = await openExperience(service, spa.id);
    expectError(await bind(anonymous, 'Totp', 'dummy'), 404, 'session.identifier_not_found');
    // Nor a sign-in's profile before identification (a registration builds one before).
    expectError(
      await anonymous.call('post', 'api/experience/profile', { type: 'username', value: unique('early') }),
      404,
      'session.identifier_not_found',
    );
    const registering = await openExperience(service, spa.id, 'Register');
    expectStatus(
      await registering.call('post', 'api/experience/profile', { type: 'username', value: unique('early') }),
      204,
    );
  });

  it('backup codes come beside another factor, and are asked of an account that has one', async () => {
    await settle({ mfa: { factors: ['Totp', 'BackupCode'], policy: 'Mandatory' } });
    const { browser, userId } = await identified();
    expectError(await browser.call('post', 'api/experience/submit'), 422, 'user.missing_mfa');
    const alone = await browser.call('post', 'api/experience/verification/backup-code/generate');
    expectError(
      await bind(browser, 'BackupCode', alone.body.verificationId),
      422,
      'session.mfa.backup_code_can_not_be_alone',
    );
    const started = await browser.call('post', 'api/experience/verification/totp/secret');
    const { secret, verificationId } = started.body;
    expectStatus(
      await browser.call('post', 'api/experience/verification/totp/verify', {
        code: await totp(secret),
        verificationId,
      }),
      200,
    );
    expectStatus(await bind(browser, 'Totp', verificationId), 204);
    expectError(await browser.call('post', 'api/experience/submit'), 422, 'session.mfa.backup_code_required');
    expectStatus(await bind(browser, 'BackupCode', alone.body.verificationId), 204);
    await submitToApplication(browser);
    const factors = (await service.api.get(`users/${userId}/mfa-verifications`)).body as Array<{ type: string }>;
    expect(factors.map((factor) => factor.type).sort()).to.deep.equal(['BackupCode', 'Totp']);
  });

  it('binds a verified email as the second factor at registration; an unverified one is refused', async () => {
    await settle({ mfa: { factors: ['EmailVerificationCode'], policy: 'Mandatory' } });
    const browser = await openExperience(service, spa.id, 'Register');
    const identity = await browser.call('post', 'api/experience/verification/new-password-identity', {
      identifier: { type: 'username', value: unique('mailmfa') },
      password,
    });
    expectStatus(await identify(browser, { verificationId: identity.body.verificationId }), 201);
    const owed = await browser.call('post', 'api/experience/submit');
    expectError(owed, 422, 'user.missing_mfa');
    expect(owed.body.data).to.deep.equal({ availableFactors: ['EmailVerificationCode'] });

    const email = newEmail('mfa');
    const unverified = await browser.call('post', 'api/experience/verification/verification-code', {
      identifier: { type: 'email', value: newEmail('late') },
      interactionEvent: 'Register',
    });
    expectError(
      await bind(browser, 'EmailVerificationCode', unverified.body.verificationId),
      400,
      'session.verification_failed',
    );
    const verified = await verifyEmail(service, browser, email, 'Register');
    expectError(await bind(browser, 'PhoneVerificationCode', verified), 404, 'session.verification_session_not_found');
    expectStatus(await bind(browser, 'EmailVerificationCode', verified), 204);
    const back = await submitToApplication(browser);
    expect(back.searchParams.get('code')).to.be.a('string');
    const users = await service.api.get('users', { searchParams: { search: email } });
    expect(users.body.map((user: { primaryEmail: string }) => user.primaryEmail)).to.deep.equal([email]);
  });

  it('suggests another factor beside the email an account signed up with, until declined', async () => {
    expectStatus(
      await service.api.patch('sign-in-exp', {
        json: { ...emailSignUp, mfa: { factors: ['EmailVerificationCode', 'Totp'], policy: 'Mandatory' } },
      }),
      200,
    );
    try {
      const browser = await openExperience(service, spa.id, 'Register');
      const email = newEmail('suggested');
      const verified = await verifyEmail(service, browser, email, 'Register');
      expectStatus(await browser.call('post', 'api/experience/profile', { type: 'password', value: password }), 204);
      expectStatus(await identify(browser, { verificationId: verified }), 201);
      const suggested = await browser.call('post', 'api/experience/submit');
      expectError(suggested, 422, 'session.mfa.suggest_additional_mfa');
      expect(suggested.body.data).to.deep.equal({
        availableFactors: ['Totp', 'EmailVerificationCode'],
        maskedIdentifiers: { EmailVerificationCode: `${email.slice(0, 4)}****@example.com` },
        isWebAuthnUsedAsSignInPasskey: false,
        skippable: true,
        suggestion: true,
      });
      expectStatus(await browser.call('post', 'api/experience/profile/mfa/mfa-suggestion-skipped'), 204);
      await submitToApplication(browser);
    } finally {
      await settle({ mfa: { factors: [], policy: 'PromptAtSignInAndSignUp' } });
    }
  });

  it('a skippable policy suggests a factor (user.suggest_mfa); choosing one makes it a prompt to enrol', async () => {
    await settle({ mfa: { factors: ['Totp'], policy: 'PromptAtSignInAndSignUp' } });
    const { browser } = await identified();
    const suggested = await browser.call('post', 'api/experience/submit');
    expectError(suggested, 422, 'user.suggest_mfa');
    expect(suggested.body.data).to.deep.equal({ availableFactors: ['Totp'], skippable: true });
    expectStatus(await browser.call('post', 'api/experience/profile/mfa/mfa-enabled'), 204);
    const owed = await browser.call('post', 'api/experience/submit');
    expectError(owed, 422, 'user.missing_mfa');
    expect(owed.body.data).to.deep.equal({ availableFactors: ['Totp'], skippable: true });
    expectStatus(await bind(browser, 'Totp', await provenTotp(browser)), 204);
    await submitToApplication(browser);
  });
});
