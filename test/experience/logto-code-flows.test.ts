import { expect } from 'chai';

import { expectError, expectStatus } from '../support/expect.ts';
import type { TestService } from '../support/service.ts';
import { ifSet, unique } from '../support/values.ts';
import {
  createUser,
  identify,
  latestCode,
  messagesTo,
  newEmail,
  openExperience,
  passwordVerification,
  sendCode,
  type SignInSetting,
  startSignInSetting,
  submitToApplication,
  verifyCode,
  verifyEmail,
} from './experience-helpers.ts';

/**
 * Verification codes in the Experience API as Logto's integration tests expect them
 * (`verifications/verification-code*`, `register-interaction/verification-code`): a resent code
 * replaces the earlier one, Logto's mismatch codes, no delivery to an address no account holds while
 * registration is closed, the `BindMfa` message for an address added after identification, and a
 * registration with a taken address turned into a sign-in.
 */

const password = 'Granite-Kestrel-64';
const codeSignIn = {
  methods: [
    { identifier: 'username', password: true, verificationCode: false, isPasswordPrimary: true },
    { identifier: 'email', password: true, verificationCode: true, isPasswordPrimary: false },
    { identifier: 'phone', password: true, verificationCode: true, isPasswordPrimary: false },
  ],
};
const phoneNumber = () => `1555${String(Math.floor(Math.random() * 10_000_000)).padStart(7, '0')}`;

describe("Verification codes as in Logto's Experience API", () => {
  let setting: SignInSetting;
  let service: TestService;
  let spa: { id: string };

  before(async () => {
    setting = await startSignInSetting();
    ({ service, spa } = setting);
    expectStatus(
      await service.api.patch('sign-in-exp', {
        json: { signUp: { identifiers: ['username'], password: true, verify: false }, signIn: codeSignIn },
      }),
      200,
    );
  });
  after(() => ifSet(setting)?.stop());

  const patch = (json: Record<string, unknown>) => service.api.patch('sign-in-exp', { json });

  it('a resent code replaces the earlier one: its verification is gone (404)', async () => {
    const email = newEmail('resent');
    const browser = await openExperience(service, spa.id);
    const first = await sendCode(browser, email, 'SignIn');
    const firstCode = await latestCode(service, email);
    const second = await sendCode(browser, email, 'SignIn');
    expectError(
      await verifyCode(browser, email, first.body.verificationId, firstCode),
      404,
      'session.verification_session_not_found',
    );
    expectStatus(await verifyCode(browser, email, second.body.verificationId, await latestCode(service, email)), 200);
  });

  it("answers Logto's mismatch codes: another address (400), the other channel (404)", async () => {
    const phone = phoneNumber();
    const browser = await openExperience(service, spa.id);
    const sent = await browser.call('post', 'api/experience/verification/verification-code', {
      identifier: { type: 'phone', value: phone },
      interactionEvent: 'SignIn',
    });
    expectStatus(sent, 200);
    const code = await latestCode(service, phone);
    const verify = (identifier: { type: string; value: string }) =>
      browser.call('post', 'api/experience/verification/verification-code/verify', {
        identifier,
        verificationId: sent.body.verificationId,
        code,
      });
    expectError(await verify({ type: 'phone', value: phoneNumber() }), 400, 'verification_code.phone_mismatch');
    expectError(
      await verify({ type: 'email', value: newEmail('other') }),
      404,
      'session.verification_session_not_found',
    );
    expectStatus(await verify({ type: 'phone', value: phone }), 200);
  });

  it('sends no code to an address no account holds while registration is closed', async () => {
    const known = newEmail('member');
    await createUser(service, { primaryEmail: known, password });
    expectStatus(await patch({ signInMode: 'SignIn' }), 200);
    try {
      const stranger = newEmail('stranger');
      const browser = await openExperience(service, spa.id);
      const toStranger = await sendCode(browser, stranger, 'SignIn');
      expectStatus(toStranger, 200);
      expect(await messagesTo(service, stranger)).to.deep.equal([]);
      expectError(
        await verifyCode(browser, stranger, toStranger.body.verificationId, '000000'),
        400,
        'verification_code.code_mismatch',
      );
      expectStatus(await sendCode(browser, known, 'SignIn'), 200);
      expect(await messagesTo(service, known)).to.have.length(1);
    } finally {
      expectStatus(await patch({ signInMode: 'SignInAndRegister' }), 200);
    }
    const open = newEmail('welcome');
    expectStatus(await sendCode(await openExperience(service, spa.id), open, 'SignIn'), 200);
    expect(await messagesTo(service, open)).to.have.length(1);
  });

  it('a code to an address added after identification goes out as BindMfa, unless sign-up asks for it', async () => {
    const username = unique('binder');
    await createUser(service, { username, password });
    const browser = await openExperience(service, spa.id);
    const verification = await passwordVerification(browser, { type: 'username', value: username }, password);
    expectStatus(await identify(browser, { verificationId: verification.body.verificationId }), 204);
    const added = newEmail('added');
    expectStatus(await sendCode(browser, added, 'SignIn'), 200);
    expect((await messagesTo(service, added))[0].purpose).to.equal('BindMfa');

    expectStatus(
      await patch({
        signUp: {
          identifiers: ['username'],
          password: true,
          verify: true,
          secondaryIdentifiers: [{ identifier: 'email', verify: true }],
        },
      }),
      200,
    );
    try {
      const asked = newEmail('asked');
      expectStatus(await sendCode(browser, asked, 'SignIn'), 200);
      expect((await messagesTo(service, asked))[0].purpose).to.equal('SignIn');
    } finally {
      expectStatus(await patch({ signUp: { identifiers: ['username'], password: true, verify: false } }), 200);
    }
  });

  it('a registration with a taken email answers email_already_in_use first, then signs in with the same code', async () => {
    const email = newEmail('taken');
    await createUser(service, { primaryEmail: email, password });
    expectStatus(await patch({ signUp: { identifiers: ['email'], password: true, verify: true } }), 200);
    try {
      const browser = await openExperience(service, spa.id, 'Register');
      const verificationId = await verifyEmail(service, browser, email, 'Register');
      // Before the password the sign-up settings also ask for: the address decides.
      expectError(await identify(browser, { verificationId }), 422, 'user.email_already_in_use');
      expectStatus(await browser.call('put', 'api/experience/interaction-event', { interactionEvent: 'SignIn' }), 204);
      expectStatus(await identify(browser, { verificationId }), 204);
      await submitToApplication(browser);
    } finally {
      expectStatus(await patch({ signUp: { identifiers: ['username'], password: true, verify: false } }), 200);
    }
  });
});
