import { expect } from 'chai';

import { expectError, expectStatus } from '../support/expect.ts';
import { ifSet, unique } from '../support/values.ts';
import type { Browser } from './browser.ts';
import {
  createUser,
  identify,
  latestCode,
  newEmail,
  openExperience,
  passwordVerification,
  type SignInSetting,
  startSignInSetting,
  submitToApplication,
  verifyEmail,
} from './experience-helpers.ts';

const password = 'Quiet-Meadow-47';

/** A phone number nobody has used yet in this process (digits, as the service stores them). */
let phones = 0;
const newPhone = () => `1555${String(Date.now() % 1_000_000).padStart(6, '0')}${++phones % 10}`;

describe('experience API: an email or phone linked during sign-in is kept (User.Data.Updated)', () => {
  let setting: SignInSetting;
  before(async () => {
    setting = await startSignInSetting();
  });
  after(() => ifSet(setting)?.stop());

  const user = async (id: string) => (await setting.service.api.get(`users/${id}`)).body;

  /** A browser signed in (identified, not yet submitted) as a new username + password user. */
  async function identifiedUser(extra: { primaryEmail?: string } = {}): Promise<{ id: string; browser: Browser }> {
    const username = unique('linker');
    const { id } = await createUser(setting.service, { username, password, ...extra });
    const browser = await openExperience(setting.service, setting.spa.id);
    const proof = await passwordVerification(browser, { type: 'username', value: username }, password);
    expectStatus(proof, 200);
    expectStatus(await identify(browser, { verificationId: proof.body.verificationId }), 204);
    return { id, browser };
  }

  async function verifyPhone(browser: Browser, phone: string): Promise<string> {
    const identifier = { type: 'phone', value: phone };
    const sent = await browser.call('post', 'api/experience/verification/verification-code', {
      identifier,
      interactionEvent: 'SignIn',
    });
    expectStatus(sent, 200);
    const verified = await browser.call('post', 'api/experience/verification/verification-code/verify', {
      identifier,
      verificationId: sent.body.verificationId,
      code: await latestCode(setting.service, phone),
    });
    expectStatus(verified, 200);
    return verified.body.verificationId;
  }

  it('stores a verified email at submit and sends User.Data.Updated with it', async () => {
    const { id, browser } = await identifiedUser();
    const email = newEmail('linked');
    const verificationId = await verifyEmail(setting.service, browser, email, 'SignIn');
    expectStatus(await browser.call('post', 'api/experience/profile', { type: 'email', verificationId }), 204);
    expect((await user(id)).primaryEmail, 'not before submit').to.equal(null);

    const { payloads } = await setting.events.expect(['User.Data.Updated', 'PostSignIn'], () =>
      submitToApplication(browser),
    );
    expect((await user(id)).primaryEmail).to.equal(email.toLowerCase());
    const [updated] = payloads['User.Data.Updated'];
    expect(updated).to.include({ path: '/api/experience/submit', method: 'POST' });
    expect(updated.data).to.include({ id, primaryEmail: email.toLowerCase() });
    expect(updated.data).to.not.have.property('passwordDigest');
    expect(payloads.PostSignIn[0].user).to.include({ id, primaryEmail: email.toLowerCase() });
  });

  it('stores a verified phone at submit and sends User.Data.Updated with it', async () => {
    const { id, browser } = await identifiedUser();
    const phone = newPhone();
    const verificationId = await verifyPhone(browser, phone);
    expectStatus(await browser.call('post', 'api/experience/profile', { type: 'phone', verificationId }), 204);

    const { payloads } = await setting.events.expect(['User.Data.Updated', 'PostSignIn'], () =>
      submitToApplication(browser),
    );
    expect((await user(id)).primaryPhone).to.equal(phone);
    expect(payloads['User.Data.Updated'][0].data).to.include({ id, primaryPhone: phone });
  });

  it('refuses an email another user holds (422 user.email_already_in_use), at profile and again at submit', async () => {
    const taken = newEmail('taken');
    await createUser(setting.service, { username: unique('holder'), primaryEmail: taken, password });
    const first = await identifiedUser();
    const verificationId = await verifyEmail(setting.service, first.browser, taken, 'SignIn');
    expectError(
      await first.browser.call('post', 'api/experience/profile', { type: 'email', verificationId }),
      422,
      'user.email_already_in_use',
    );

    // Free when added, taken before submit: the submit refuses it and changes nothing.
    const late = newEmail('late');
    const second = await identifiedUser();
    const lateId = await verifyEmail(setting.service, second.browser, late, 'SignIn');
    expectStatus(
      await second.browser.call('post', 'api/experience/profile', { type: 'email', verificationId: lateId }),
      204,
    );
    await createUser(setting.service, { username: unique('racer'), primaryEmail: late, password });
    await setting.events.expect([], async () =>
      expectError(await second.browser.call('post', 'api/experience/submit'), 422, 'user.email_already_in_use'),
    );
    expect((await user(second.id)).primaryEmail).to.equal(null);
  });

  it('refuses a phone another user holds (422 user.phone_already_in_use)', async () => {
    const phone = newPhone();
    const holder = await createUser(setting.service, { username: unique('holder'), password });
    expectStatus(await setting.service.api.patch(`users/${holder.id}`, { json: { primaryPhone: phone } }), 200);
    const { browser } = await identifiedUser();
    const verificationId = await verifyPhone(browser, phone);
    expectError(
      await browser.call('post', 'api/experience/profile', { type: 'phone', verificationId }),
      422,
      'user.phone_already_in_use',
    );
  });

  it('does not replace an email the user already has (422 user.email_exists_in_profile)', async () => {
    const own = newEmail('own');
    const { id, browser } = await identifiedUser({ primaryEmail: own });
    const verificationId = await verifyEmail(setting.service, browser, newEmail('other'), 'SignIn');
    expectError(
      await browser.call('post', 'api/experience/profile', { type: 'email', verificationId }),
      422,
      'user.email_exists_in_profile',
    );
    await setting.events.expect(['PostSignIn'], () => submitToApplication(browser));
    expect((await user(id)).primaryEmail).to.equal(own.toLowerCase());
  });

  it('signs in without a data event when nothing was linked', async () => {
    const { browser } = await identifiedUser();
    await setting.events.expect(['PostSignIn'], () => submitToApplication(browser));
  });

  describe('a profile field the sign-up settings require and the user lacks', () => {
    const signUp = (json: Record<string, unknown>) =>
      setting.service.api.patch('sign-in-exp', { json: { signUp: json } });
    afterEach(async () => {
      expectStatus(await signUp({ identifiers: ['username'], password: true, verify: false }), 200);
    });

    it('asks for a missing email at submit (422 user.missing_profile), then stores the verified one', async () => {
      const { id, browser } = await identifiedUser();
      expectStatus(await signUp({ identifiers: ['email'], password: true, verify: true }), 200);
      const missing = await setting.events.expect([], () => browser.call('post', 'api/experience/submit'));
      expectError(missing.result, 422, 'user.missing_profile');
      expect(missing.result.body.data).to.deep.equal({ missingProfile: ['email'] });

      const email = newEmail('required');
      const verificationId = await verifyEmail(setting.service, browser, email, 'SignIn');
      expectStatus(await browser.call('post', 'api/experience/profile', { type: 'email', verificationId }), 204);
      const { payloads } = await setting.events.expect(['User.Data.Updated', 'PostSignIn'], () =>
        submitToApplication(browser),
      );
      expect(payloads['User.Data.Updated'][0].data).to.include({ id, primaryEmail: email.toLowerCase() });
      expect((await user(id)).primaryEmail).to.equal(email.toLowerCase());
    });

    it('asks for a missing password at submit, then stores it: the next sign-in uses it', async () => {
      const email = newEmail('passwordless');
      const { id } = await createUser(setting.service, { username: unique('nopass'), primaryEmail: email });
      const browser = await openExperience(setting.service, setting.spa.id);
      const verificationId = await verifyEmail(setting.service, browser, email, 'SignIn');
      expectStatus(await identify(browser, { verificationId }), 204);
      const missing = await browser.call('post', 'api/experience/submit');
      expectError(missing, 422, 'user.missing_profile');
      expect(missing.body.data).to.deep.equal({ missingProfile: ['password'] });

      expectError(
        await browser.call('post', 'api/experience/profile', { type: 'password', value: 'short' }),
        422,
        'password.rejected',
      );
      expectStatus(await browser.call('post', 'api/experience/profile', { type: 'password', value: password }), 204);
      await setting.events.expect(['User.Data.Updated', 'PostSignIn'], () => submitToApplication(browser));
      expect((await user(id)).hasPassword).to.equal(true);

      const again = await openExperience(setting.service, setting.spa.id);
      expectStatus(await passwordVerification(again, { type: 'email', value: email }, password), 200);
    });
  });
});
