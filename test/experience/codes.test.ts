import { expect } from 'chai';
import type { Knex } from 'knex';

import { openDatabase } from '../../lib/storage/database.ts';
import { expectError, expectStatus } from '../support/expect.ts';
import { startService, type TestService } from '../support/service.ts';
import { ifSet, unique } from '../support/values.ts';
import {
  createSpa,
  createUser,
  identify,
  latestCode,
  messagesTo,
  newEmail,
  openExperience,
  sendCode,
  signInWithPassword,
  submitToApplication,
  verifyCode,
  verifyEmail,
  wrongCode,
} from './experience-helpers.ts';

describe('experience API: verification codes (register, sign in, reset a password)', () => {
  let service: TestService;
  let db: Knex;
  let app: { id: string };
  before(async () => {
    service = await startService();
    db = openDatabase(service.config.dbUrl);
    app = await createSpa(service);
  });
  after(async () => {
    await ifSet(db)?.destroy();
    await ifSet(service)?.stop();
  });

  const userByEmail = async (email: string) => {
    const users = (await service.api.get('users', { searchParams: { search: email } })).body as Array<{
      id: string;
      primaryEmail: string;
      hasPassword: boolean;
    }>;
    return users.find((user) => user.primaryEmail === email.toLowerCase());
  };

  describe('(3a) register and (3b) sign in with an email code', () => {
    const email = newEmail('coder');
    let userId: string;

    before(async () => {
      const patched = await service.api.patch('sign-in-exp', {
        json: { signUp: { identifiers: ['email'], password: false, verify: true } },
      });
      expectStatus(patched, 200);
    });
    after(async () => {
      await service.api.patch('sign-in-exp', {
        json: { signUp: { identifiers: ['username'], password: true, verify: false } },
      });
    });

    it('registers with an email code: 201, then submit lands at the application with a code', async () => {
      const browser = await openExperience(service, app.id, 'Register');
      const sent = await sendCode(browser, email, 'Register');
      expectStatus(sent, 200);
      expect(sent.body.verificationId).to.be.a('string');
      const [message] = await messagesTo(service, email);
      expect(message).to.include({ recipient: email, type: 'email', purpose: 'Register' });
      expect(message.code).to.match(/^\d{6}$/);

      const verified = await verifyCode(browser, email, sent.body.verificationId, message.code);
      expectStatus(verified, 200);
      expect(verified.body).to.deep.equal({ verificationId: sent.body.verificationId });

      expectStatus(await identify(browser, { verificationId: sent.body.verificationId }), 201);
      const state = await browser.call('get', 'api/experience/interaction');
      expect(state.body.userId).to.be.a('string');
      userId = state.body.userId;
      await submitToApplication(browser);

      const user = await userByEmail(email);
      expect(user).to.include({ id: userId, primaryEmail: email, hasPassword: false });
    });

    it('refuses to register the same email again: 422 user.email_already_in_use', async () => {
      const browser = await openExperience(service, app.id, 'Register');
      const verificationId = await verifyEmail(service, browser, email, 'Register');
      expectError(await identify(browser, { verificationId }), 422, 'user.email_already_in_use');
    });

    it('signs in with an email code: identification 204, the same user', async () => {
      const browser = await openExperience(service, app.id);
      const verificationId = await verifyEmail(service, browser, email, 'SignIn');
      expect((await messagesTo(service, email))[0]).to.include({ purpose: 'SignIn' });
      expectStatus(await identify(browser, { verificationId }), 204);
      expect((await browser.call('get', 'api/experience/interaction')).body.userId).to.equal(userId);
      await submitToApplication(browser);
    });

    it('finds the account whatever the case of the email typed', async () => {
      const browser = await openExperience(service, app.id);
      const shouted = email.toUpperCase();
      const sent = await sendCode(browser, shouted, 'SignIn');
      expectStatus(sent, 200);
      expectStatus(await verifyCode(browser, shouted, sent.body.verificationId, await latestCode(service, email)), 200);
      expectStatus(await identify(browser, { verificationId: sent.body.verificationId }), 204);
      expect((await browser.call('get', 'api/experience/interaction')).body.userId).to.equal(userId);
    });

    it('answers 404 user.user_not_exist at identification for an email with no account', async () => {
      const stranger = newEmail('stranger');
      const browser = await openExperience(service, app.id);
      const verificationId = await verifyEmail(service, browser, stranger, 'SignIn');
      const response = await identify(browser, { verificationId });
      expectError(response, 404, 'user.user_not_exist');
      expectError(await browser.call('post', 'api/experience/submit'), 404, 'session.identifier_not_found');
    });
  });

  describe('(4) forgot password', () => {
    it('resets the password by email code; the new password signs in, the old one does not', async () => {
      const username = unique('forgetful');
      const email = newEmail('forgetful');
      await createUser(service, { username, primaryEmail: email, password: 'Old-Harbor-73' });

      const browser = await openExperience(service, app.id, 'ForgotPassword');
      const verificationId = await verifyEmail(service, browser, email, 'ForgotPassword');
      expect((await messagesTo(service, email))[0]).to.include({ purpose: 'ForgotPassword' });
      expectStatus(await identify(browser, { verificationId }), 204);

      expectError(await browser.call('post', 'api/experience/submit'), 422, 'user.new_password_required_in_profile');
      expectError(
        await browser.call('put', 'api/experience/profile/password', { password: 'Old-Harbor-73' }),
        422,
        'user.same_password',
      );
      const weak = await browser.call('put', 'api/experience/profile/password', { password: 'short' });
      expectError(weak, 422, 'password.rejected');
      expect(weak.body.data.issues.map((issue: { code: string }) => issue.code)).to.include(
        'password_rejected.too_short',
      );
      expectStatus(await browser.call('put', 'api/experience/profile/password', { password: 'New-Willow-84' }), 204);

      const submitted = await browser.call('post', 'api/experience/submit');
      expect(submitted.statusCode, JSON.stringify(submitted.body)).to.equal(204);
      expect(submitted.body ?? '').to.be.oneOf(['', undefined]);

      expectStatus(
        await signInWithPassword(service, app.id, { type: 'username', value: username }, 'New-Willow-84'),
        200,
      );
      expectStatus(await signInWithPassword(service, app.id, { type: 'email', value: email }, 'New-Willow-84'), 200);
      expectError(
        await signInWithPassword(service, app.id, { type: 'username', value: username }, 'Old-Harbor-73'),
        422,
        'session.invalid_credentials',
      );
    });

    it('answers a reset for an unknown email with 200 and a verificationId, and sends nothing', async () => {
      const known = newEmail('known');
      await createUser(service, { primaryEmail: known, password: 'Old-Harbor-73' });
      const stranger = newEmail('nobody');
      const browser = await openExperience(service, app.id, 'ForgotPassword');

      const toStranger = await sendCode(browser, stranger, 'ForgotPassword');
      expectStatus(toStranger, 200);
      expect(toStranger.body.verificationId).to.be.a('string').and.not.equal('');
      expect(await messagesTo(service, stranger)).to.deep.equal([]);

      // A code exists (Logto's), so a guess is a wrong code, as for anyone; nothing it proves identifies.
      const guessed = await verifyCode(browser, stranger, toStranger.body.verificationId, '000000');
      expectError(guessed, 400, 'verification_code.code_mismatch');
      expectError(
        await identify(browser, { verificationId: toStranger.body.verificationId }),
        400,
        'session.verification_failed',
      );

      const toKnown = await sendCode(browser, known, 'ForgotPassword');
      expectStatus(toKnown, 200);
      expect(Object.keys(toStranger.body)).to.deep.equal(Object.keys(toKnown.body));
      expect(await messagesTo(service, known)).to.have.length(1);
    });
  });

  describe('verification-code/verify errors', () => {
    it('answers 400 verification_code.code_mismatch to a wrong code, and exceed_max_try after 5 wrong tries', async () => {
      const email = newEmail('guesser');
      const browser = await openExperience(service, app.id, 'Register');
      const sent = await sendCode(browser, email, 'Register');
      const code = await latestCode(service, email);
      for (let attempt = 1; attempt <= 5; attempt++) {
        expectError(
          await verifyCode(browser, email, sent.body.verificationId, wrongCode(code)),
          400,
          'verification_code.code_mismatch',
        );
      }
      expectError(
        await verifyCode(browser, email, sent.body.verificationId, wrongCode(code)),
        400,
        'verification_code.exceed_max_try',
      );
      // Even the right code is refused now; a new code works.
      expectError(
        await verifyCode(browser, email, sent.body.verificationId, code),
        400,
        'verification_code.exceed_max_try',
      );
      await verifyEmail(service, browser, email, 'Register');
    });

    it('refuses a used code with verification_code.not_found, and an expired one with verification_code.expired', async () => {
      const email = newEmail('reuser');
      const browser = await openExperience(service, app.id, 'Register');
      const sent = await sendCode(browser, email, 'Register');
      const code = await latestCode(service, email);
      expectStatus(await verifyCode(browser, email, sent.body.verificationId, code), 200);
      expectError(await verifyCode(browser, email, sent.body.verificationId, code), 400, 'verification_code.not_found');

      const again = await sendCode(browser, email, 'Register');
      const second = await latestCode(service, email);
      await db('verification_codes')
        .where({ recipient: email })
        .whereNull('verified_at')
        .update({ expires_at: Date.now() - 1000 });
      expectError(
        await verifyCode(browser, email, again.body.verificationId, second),
        400,
        'verification_code.expired',
      );
    });

    it('refuses an unknown verificationId (404) and a code checked against another email (400 email_mismatch)', async () => {
      const email = newEmail('mixer');
      const browser = await openExperience(service, app.id, 'Register');
      const sent = await sendCode(browser, email, 'Register');
      const code = await latestCode(service, email);
      expectError(
        await verifyCode(browser, email, 'no-such-verification', code),
        404,
        'session.verification_session_not_found',
      );
      expectError(
        await verifyCode(browser, newEmail('other'), sent.body.verificationId, code),
        400,
        'verification_code.email_mismatch',
      );
      // A verification belongs to its interaction: another browser cannot use it.
      const other = await openExperience(service, app.id, 'Register');
      expectError(
        await verifyCode(other, email, sent.body.verificationId, code),
        404,
        'session.verification_session_not_found',
      );
      expectStatus(await verifyCode(browser, email, sent.body.verificationId, code), 200);
    });
  });
});
