import { expect } from 'chai';

import { waitForLog } from '../audit/support.ts';
import type { Browser } from '../experience/browser.ts';
import {
  identify,
  latestCode,
  messagesTo,
  newEmail,
  openExperience,
  passwordVerification,
  type SignInSetting,
  startSignInSetting,
  submitToApplication,
  verifyEmail,
  wrongCode,
} from '../experience/experience-helpers.ts';
import { expectError, expectStatus } from '../support/expect.ts';
import { HookEvents } from '../support/hook-events.ts';
import type { TestService } from '../support/service.ts';
import { ifSet, unique } from '../support/values.ts';

/**
 * A user's verified email or phone as a second factor (Logto's `EmailVerificationCode` and
 * `PhoneVerificationCode` MFA factors): the factor is there when the user has the address, a code
 * goes to it through `POST /api/experience/verification/mfa-verification-code`, and proving it lets
 * the sign-in finish.
 */

const password = 'Granite-Kestrel-64';
const passwordOnly = {
  methods: [
    { identifier: 'username', password: true, verificationCode: false, isPasswordPrimary: true },
    { identifier: 'email', password: true, verificationCode: false, isPasswordPrimary: true },
  ],
};

describe('Email and phone codes as second factors', () => {
  let setting: SignInSetting;
  let service: TestService;
  let events: HookEvents;
  let spa: { id: string };

  before(async () => {
    setting = await startSignInSetting();
    ({ service, events, spa } = setting);
  });
  after(() => ifSet(setting)?.stop());

  const patch = (json: Record<string, unknown>) => service.api.patch('sign-in-exp', { json });

  async function setMfa(factors: string[], policy = 'UserControlled'): Promise<void> {
    expectStatus(await patch({ signIn: passwordOnly, mfa: { factors, policy } }), 200);
  }

  async function newUser(profile: { primaryEmail?: string; primaryPhone?: string } = {}) {
    const username = unique('coded');
    const created = await service.api.post('users', { json: { username, password, ...profile } });
    expectStatus(created, 200);
    return { id: String(created.body.id), username };
  }

  /** A browser whose interaction has identified `username` by password (submit not yet called). */
  async function identified(username: string): Promise<Browser> {
    const browser = await openExperience(service, spa.id);
    const verification = await passwordVerification(browser, { type: 'username', value: username }, password);
    expectStatus(verification, 200);
    expectStatus(await identify(browser, { verificationId: verification.body.verificationId }), 204);
    return browser;
  }

  const submit = (browser: Browser) => browser.call('post', 'api/experience/submit');
  const sendMfaCode = (browser: Browser, identifierType: string) =>
    browser.call('post', 'api/experience/verification/mfa-verification-code', { identifierType });
  const verifyMfaCode = (browser: Browser, body: Record<string, unknown>) =>
    browser.call('post', 'api/experience/verification/mfa-verification-code/verify', body);

  describe('the settings (PATCH /api/sign-in-exp)', () => {
    it('accepts WebAuthn among the factors (passkeys: experience-webauthn.test.ts)', async () => {
      const accepted = await patch({ mfa: { factors: ['Totp', 'WebAuthn'], policy: 'UserControlled' } });
      expectStatus(accepted, 200);
      expect(accepted.body.mfa).to.deep.equal({ factors: ['Totp', 'WebAuthn'], policy: 'UserControlled' });
      await setMfa(['Totp']);
    });

    it("refuses a code as both the sign-in method and the second factor of the same channel (Logto's 400s)", async () => {
      const codeSignIn = (identifier: 'email' | 'phone') => ({
        methods: [
          { identifier: 'username', password: true, verificationCode: false, isPasswordPrimary: true },
          { identifier, password: false, verificationCode: true, isPasswordPrimary: false },
        ],
      });
      expectStatus(await patch({ signIn: codeSignIn('email'), mfa: { factors: [], policy: 'UserControlled' } }), 200);
      expectError(
        await patch({ mfa: { factors: ['EmailVerificationCode'], policy: 'Mandatory' } }),
        400,
        'sign_in_experiences.email_verification_code_cannot_be_used_for_mfa',
      );
      expectStatus(await patch({ signIn: codeSignIn('phone') }), 200);
      expectError(
        await patch({ mfa: { factors: ['PhoneVerificationCode'], policy: 'Mandatory' } }),
        400,
        'sign_in_experiences.phone_verification_code_cannot_be_used_for_mfa',
      );

      // With password sign-in the same factors are fine; turning the code sign-in on again is then refused.
      await setMfa(['EmailVerificationCode', 'PhoneVerificationCode']);
      expectError(
        await patch({ signIn: codeSignIn('email') }),
        400,
        'sign_in_experiences.email_verification_code_cannot_be_used_for_sign_in',
      );
      expectError(
        await patch({ signIn: codeSignIn('phone') }),
        400,
        'sign_in_experiences.phone_verification_code_cannot_be_used_for_sign_in',
      );
      const stored = await service.api.get('sign-in-exp');
      expect(stored.body.signIn).to.deep.equal(passwordOnly);
    });
  });

  describe('verification at sign-in', () => {
    it("the user's email is the factor: a code sent to it (masked in the 403) proves the second factor", async () => {
      await setMfa(['EmailVerificationCode'], 'NoPrompt');
      const email = `jade.${unique('mfa')}@example.com`;
      const user = await newUser({ primaryEmail: email });
      const browser = await identified(user.username);

      const owed = await submit(browser);
      expectError(owed, 403, 'session.mfa.require_mfa_verification');
      expect(owed.body.data).to.deep.equal({
        availableFactors: ['EmailVerificationCode'],
        maskedIdentifiers: { EmailVerificationCode: 'jade****@example.com' },
      });

      const sent = await sendMfaCode(browser, 'email');
      expectStatus(sent, 200);
      expect(sent.body).to.have.keys('verificationId');
      const { verificationId } = sent.body;
      const [message] = await messagesTo(service, email);
      expect(message).to.include({ type: 'email', purpose: 'MfaVerification' });

      const code = await latestCode(service, email);
      expectError(
        await verifyMfaCode(browser, { verificationId, code: wrongCode(code), identifierType: 'email' }),
        400,
        'verification_code.code_mismatch',
      );
      // The refusal is in the audit log, as a refused TOTP or backup code is.
      const refused = await waitForLog(
        service,
        { logKey: 'Interaction.SignIn.Verification.EmailVerificationCode.Submit', userId: user.id },
        () => true,
      );
      expect(refused.payload).to.deep.include({
        result: 'Error',
        error: { code: 'verification_code.code_mismatch' },
        userId: user.id,
      });
      expectError(await submit(browser), 403, 'session.mfa.require_mfa_verification');
      // The record is an MFA proof: neither the identifier-code check nor identification takes it.
      expectError(
        await browser.call('post', 'api/experience/verification/verification-code/verify', {
          identifier: { type: 'email', value: email },
          verificationId,
          code,
        }),
        404,
        'session.verification_session_not_found',
      );
      expectError(
        await verifyMfaCode(browser, { verificationId, code, identifierType: 'phone' }),
        400,
        'session.verification_failed',
      );

      const verified = await verifyMfaCode(browser, { verificationId, code, identifierType: 'email' });
      expectStatus(verified, 200);
      expect(verified.body).to.deep.equal({ verificationId });
      expectError(await identify(browser, { verificationId }), 400, 'session.invalid_interaction_type');
      await events.expect(['PostSignIn'], () => submitToApplication(browser));
    });

    it("the user's phone is the factor, masked to its last four digits", async () => {
      await setMfa(['PhoneVerificationCode', 'EmailVerificationCode']);
      const phone = `1555${String(Math.floor(Math.random() * 1e7)).padStart(7, '0')}`;
      const user = await newUser({ primaryPhone: phone });
      const browser = await identified(user.username);

      const owed = await submit(browser);
      expectError(owed, 403, 'session.mfa.require_mfa_verification');
      expect(owed.body.data).to.deep.equal({
        availableFactors: ['PhoneVerificationCode'],
        maskedIdentifiers: { PhoneVerificationCode: `****${phone.slice(-4)}` },
      });
      expectError(await sendMfaCode(browser, 'email'), 400, 'session.mfa.mfa_factor_not_enabled');

      const sent = await sendMfaCode(browser, 'phone');
      expectStatus(sent, 200);
      const code = await latestCode(service, phone);
      expectStatus(
        await verifyMfaCode(browser, { verificationId: sent.body.verificationId, code, identifierType: 'phone' }),
        200,
      );
      await submitToApplication(browser);
    });

    it('a factor not enabled in the settings is not offered, and no code is sent for it', async () => {
      await setMfa(['Totp']);
      const email = newEmail('off');
      const user = await newUser({ primaryEmail: email });
      const browser = await identified(user.username);
      expectError(await sendMfaCode(browser, 'email'), 400, 'session.mfa.mfa_factor_not_enabled');
      expect(await messagesTo(service, email)).to.deep.equal([]);
      // Not asked either: the user has no TOTP, and the email is not a factor here (Logto's suggestion).
      expectError(await submit(browser), 422, 'user.suggest_mfa');
    });

    it('refuses bad input and calls before identification with 4xx codes', async () => {
      await setMfa(['EmailVerificationCode']);
      const browser = await openExperience(service, spa.id);
      expectError(await sendMfaCode(browser, 'email'), 404, 'session.identifier_not_found');
      const user = await newUser({ primaryEmail: newEmail('bad') });
      const signedIn = await identified(user.username);
      expectError(await sendMfaCode(signedIn, 'username'), 400, 'guard.invalid_input');
      expectError(
        await signedIn.call('post', 'api/experience/verification/mfa-verification-code', {}),
        400,
        'guard.invalid_input',
      );
      expectError(
        await verifyMfaCode(signedIn, { verificationId: 'nope', code: '123456', identifierType: 'email' }),
        404,
        'session.verification_session_not_found',
      );
      expectError(
        await verifyMfaCode(signedIn, { verificationId: 'nope', code: 123456, identifierType: 'email' }),
        400,
        'guard.invalid_input',
      );
    });

    it('the send is limited per recipient: the 11th answers 429 with Message.RateLimited', async () => {
      await setMfa(['EmailVerificationCode']);
      const email = newEmail('flood');
      const user = await newUser({ primaryEmail: email });
      const browser = await identified(user.username);
      await events.expect([], async () => {
        for (let index = 0; index < 10; index++) {
          expectStatus(await sendMfaCode(browser, 'email'), 200);
        }
      });
      const limited = await events.expect(['Message.RateLimited'], () => sendMfaCode(browser, 'email'));
      expectError(limited.result, 429, 'request.message_rate_limited');
      expect(limited.payloads['Message.RateLimited'][0]).to.include({
        action: 'VerificationCodeSend',
        recipient: email.toLowerCase(),
      });
    });

    it('wrong codes lock the second factor (Identifier.Lockout {type: userId}), not the address as a sign-in identifier', async () => {
      await setMfa(['EmailVerificationCode']);
      expectStatus(await patch({ sentinelPolicy: { maxAttempts: 2 } }), 200);
      try {
        const email = newEmail('guess');
        const user = await newUser({ primaryEmail: email });
        const browser = await identified(user.username);
        const sent = await sendMfaCode(browser, 'email');
        const code = await latestCode(service, email);
        const guess = { verificationId: sent.body.verificationId, code: wrongCode(code), identifierType: 'email' };
        expectError(await verifyMfaCode(browser, guess), 400, 'verification_code.code_mismatch');
        const locked = await events.expect(['Identifier.Lockout'], () => verifyMfaCode(browser, guess));
        expectError(locked.result, 400, 'session.verification_blocked_too_many_attempts');
        expect(locked.payloads['Identifier.Lockout'][0]).to.include({ type: 'userId', value: user.id });
        expectError(
          await verifyMfaCode(browser, { ...guess, code }),
          400,
          'session.verification_blocked_too_many_attempts',
        );
        // The password still identifies the user; the second factor stays locked.
        const again = await identified(user.username);
        expectError(await submit(again), 403, 'session.mfa.require_mfa_verification');
      } finally {
        expectStatus(await patch({ sentinelPolicy: { maxAttempts: 10 } }), 200);
      }
    });
  });

  describe('the requirement (Mandatory, no address to send to)', () => {
    it('a user without the address owes the factor (422 user.missing_mfa); an email verified and added in the interaction fulfils it', async () => {
      await setMfa(['EmailVerificationCode'], 'Mandatory');
      const user = await newUser();
      const browser = await identified(user.username);
      const owed = await submit(browser);
      expectError(owed, 422, 'user.missing_mfa');
      expect(owed.body.data).to.deep.equal({ availableFactors: ['EmailVerificationCode'] });

      const email = newEmail('bound');
      const verificationId = await verifyEmail(service, browser, email, 'SignIn');
      expectStatus(await browser.call('post', 'api/experience/profile', { type: 'email', verificationId }), 204);
      await submitToApplication(browser);
    });

    it('a user with the address under Mandatory proves it instead of enrolling', async () => {
      await setMfa(['EmailVerificationCode', 'Totp', 'BackupCode'], 'Mandatory');
      const user = await newUser({ primaryEmail: newEmail('has') });
      const owed = await submit(await identified(user.username));
      expectError(owed, 403, 'session.mfa.require_mfa_verification');
      expect(owed.body.data.availableFactors).to.deep.equal(['EmailVerificationCode']);
    });
  });
});
