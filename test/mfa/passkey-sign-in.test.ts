import { expect } from 'chai';

import { waitForLog } from '../audit/support.ts';
import type { Browser } from '../experience/browser.ts';
import {
  createUser,
  identify,
  openExperience,
  passwordVerification,
  type SignInSetting,
  startSignInSetting,
  submitToApplication,
} from '../experience/experience-helpers.ts';
import { expectError, expectStatus } from '../support/expect.ts';
import type { TestService } from '../support/service.ts';
import { SoftwareAuthenticator } from '../support/software-authenticator.ts';
import { ifSet, unique } from '../support/values.ts';

/**
 * Passkeys as a sign-in method of their own (Logto's passkey sign-in): the discoverable ceremony
 * (preflight, verify without a verification id) and the identifier-first one; the passkey names the
 * account and stands for both factors; refusals are audited and count towards the lockout.
 */

const password = 'Granite-Kestrel-64';
const preflightPath = 'api/experience/preflight/sign-in-passkey/authentication';
const namedPath = 'api/experience/verification/sign-in-passkey/authentication';
const verifyPath = 'api/experience/verification/sign-in-passkey/authentication/verify';

describe('Passkey sign-in (passwordless) in the Experience API', () => {
  let setting: SignInSetting;
  let service: TestService;
  let spa: { id: string };

  before(async () => {
    setting = await startSignInSetting();
    ({ service, spa } = setting);
    expectStatus(
      await service.api.patch('sign-in-exp', {
        json: {
          mfa: { factors: ['WebAuthn'], policy: 'UserControlled' },
          passkeySignIn: { enabled: true },
          sentinelPolicy: { maxAttempts: 3 },
        },
      }),
      200,
    );
  });
  after(() => ifSet(setting)?.stop());

  /** A user holding a passkey of `authenticator`, added at a password sign-in when the MFA policy asks. */
  async function userWithPasskey(authenticator: SoftwareAuthenticator) {
    const username = unique('pksignin');
    const user = await createUser(service, { username, password });
    const browser = await openExperience(service, spa.id);
    const verification = await passwordVerification(browser, { type: 'username', value: username }, password);
    expectStatus(await identify(browser, { verificationId: verification.body.verificationId }), 204);
    const started = await browser.call('post', 'api/experience/verification/web-authn/registration');
    const { verificationId, registrationOptions } = started.body;
    expectStatus(
      await browser.call('post', 'api/experience/verification/web-authn/registration/verify', {
        verificationId,
        payload: authenticator.register(registrationOptions),
      }),
      200,
    );
    expectStatus(await browser.call('post', 'api/experience/profile/mfa', { type: 'WebAuthn', verificationId }), 204);
    await submitToApplication(browser);
    return { user, username };
  }

  /** A browser at the sign-in page that has not chosen a way in yet (no PUT /experience). */
  const signInPage = () => openExperience(service, spa.id, null);

  async function preflight(browser: Browser) {
    const started = await browser.call('post', preflightPath);
    expectStatus(started, 200);
    return started.body.authenticationOptions;
  }

  it('signs in with a discoverable passkey alone: no identifier, no password, no second factor asked', async () => {
    const authenticator = new SoftwareAuthenticator(service.url);
    const { user } = await userWithPasskey(authenticator);

    const browser = await signInPage();
    const options = await preflight(browser);
    // Discoverable: no credential is offered, the browser lists the passkeys it holds for this site.
    expect(options.allowCredentials).to.deep.equal([]);
    expect(options.rpId).to.equal('127.0.0.1');
    const verified = await browser.call('post', verifyPath, { payload: authenticator.authenticate(options) });
    expectStatus(verified, 200);
    expect(verified.body.verificationId).to.be.a('string');

    const state = await browser.call('get', 'api/experience/interaction');
    expect(state.body.interactionEvent).to.equal('SignIn');
    expectStatus(await identify(browser, { verificationId: verified.body.verificationId }), 204);
    expect((await browser.call('get', 'api/experience/interaction')).body.userId).to.equal(user.id);
    await submitToApplication(browser);

    // The challenge answered one ceremony: the same answer again is refused.
    const again = await signInPage();
    const replayed = authenticator.authenticate(await preflight(again));
    expectStatus(await again.call('post', verifyPath, { payload: replayed }), 200);
    expectError(
      await again.call('post', verifyPath, { payload: replayed }),
      404,
      'session.verification_session_not_found',
    );
  });

  it('identifier first: offers the named account passkeys; another account passkey is refused', async () => {
    const authenticator = new SoftwareAuthenticator(service.url);
    const { username } = await userWithPasskey(authenticator);
    const other = new SoftwareAuthenticator(service.url);
    await userWithPasskey(other);

    const browser = await openExperience(service, spa.id);
    const started = await browser.call('post', namedPath, { identifier: { type: 'username', value: username } });
    expectStatus(started, 200);
    const { verificationId, authenticationOptions } = started.body;
    expect(authenticationOptions.allowCredentials.map((credential: { id: string }) => credential.id)).to.deep.equal([
      authenticator.credentials[0].id.toString('base64url'),
    ]);
    expectError(
      await browser.call('post', verifyPath, {
        verificationId,
        payload: other.authenticate({ challenge: authenticationOptions.challenge }),
      }),
      400,
      'session.mfa.webauthn_verification_failed',
    );
    const answer = authenticator.authenticate(authenticationOptions);
    expectStatus(await browser.call('post', verifyPath, { verificationId, payload: answer }), 200);
    expectStatus(await identify(browser, { verificationId }), 204);
    await submitToApplication(browser);

    // An unknown account gets options like any other: nothing says whether it exists.
    const unknown = await openExperience(service, spa.id);
    const nobody = await unknown.call('post', namedPath, { identifier: { type: 'username', value: unique('nobody') } });
    expectStatus(nobody, 200);
    expect(nobody.body.authenticationOptions.allowCredentials).to.deep.equal([]);
    expectError(
      await unknown.call('post', verifyPath, {
        verificationId: nobody.body.verificationId,
        payload: authenticator.authenticate(nobody.body.authenticationOptions),
      }),
      400,
      'session.mfa.webauthn_verification_failed',
    );
  });

  it('an unknown passkey is refused and audited; a wrong signature counts towards the lockout', async () => {
    const stranger = new SoftwareAuthenticator(service.url);
    stranger.register({ challenge: 'x', rp: { id: '127.0.0.1' }, user: { id: 'someone' } });
    const browser = await signInPage();
    // The entry of this refusal, not an earlier test's (the log is written in batches).
    const since = Date.now();
    expectError(
      await browser.call('post', verifyPath, { payload: stranger.authenticate(await preflight(browser)) }),
      400,
      'session.mfa.webauthn_verification_failed',
    );
    const entry = await waitForLog(
      service,
      { logKey: 'Interaction.SignIn.Verification.SignInPasskey.Submit' },
      (found) => found.payload.applicationId === spa.id && found.createdAt >= since,
    );
    expect(entry.payload).to.deep.include({
      result: 'Error',
      status: 400,
      error: { code: 'session.mfa.webauthn_verification_failed' },
    });

    // A forged signature for a real passkey: three (the policy's maxAttempts) lock it, even a good answer then.
    const authenticator = new SoftwareAuthenticator(service.url);
    await userWithPasskey(authenticator);
    const forger = new SoftwareAuthenticator(service.url);
    forger.register({ challenge: 'x', rp: { id: '127.0.0.1' }, user: { id: 'someone' } });
    const forge = (options: { challenge: string }) => {
      const forged = forger.authenticate(options, { credential: forger.credentials[0] });
      forged.id = authenticator.credentials[0].id.toString('base64url');
      forged.rawId = forged.id;
      return forged;
    };
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const page = await signInPage();
      const refusedAnswer = await page.call('post', verifyPath, { payload: forge(await preflight(page)) });
      expect(refusedAnswer.statusCode).to.equal(400);
      expect(refusedAnswer.body.code).to.equal(
        attempt < 2 ? 'session.mfa.webauthn_verification_failed' : 'session.verification_blocked_too_many_attempts',
      );
    }
    const locked = await signInPage();
    expectError(
      await locked.call('post', verifyPath, { payload: authenticator.authenticate(await preflight(locked)) }),
      400,
      'session.verification_blocked_too_many_attempts',
    );
  });

  it('is refused when the sign-in experience does not enable it', async () => {
    expectStatus(await service.api.patch('sign-in-exp', { json: { passkeySignIn: { enabled: false } } }), 200);
    try {
      const settings = await service.api.get('sign-in-exp');
      expect(settings.body.passkeySignIn).to.deep.equal({
        enabled: false,
        showPasskeyButton: true,
        allowAutofill: true,
      });
      expectError(await (await signInPage()).call('post', preflightPath), 422, 'user.sign_in_method_not_enabled');
    } finally {
      expectStatus(await service.api.patch('sign-in-exp', { json: { passkeySignIn: { enabled: true } } }), 200);
    }
  });
});
