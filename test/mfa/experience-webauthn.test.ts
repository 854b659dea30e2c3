import { expect } from 'chai';

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
import type { HookEvents } from '../support/hook-events.ts';
import type { TestService } from '../support/service.ts';
import { SoftwareAuthenticator } from '../support/software-authenticator.ts';
import { ifSet, unique } from '../support/values.ts';

/**
 * Passkeys (WebAuthn) as a second factor in the Experience API, answered by a software
 * authenticator (test/support/software-authenticator.ts): registration when the policy asks,
 * proof when owed, and what a forged or replayed answer gets.
 */

const password = 'Granite-Kestrel-64';

describe('Passkeys (WebAuthn) as a second factor in the Experience API', () => {
  let setting: SignInSetting;
  let service: TestService;
  let events: HookEvents;
  let spa: { id: string };

  before(async () => {
    setting = await startSignInSetting();
    ({ service, events, spa } = setting);
    expectStatus(
      await service.api.patch('sign-in-exp', { json: { mfa: { factors: ['WebAuthn'], policy: 'UserControlled' } } }),
      200,
    );
  });
  after(() => ifSet(setting)?.stop());

  async function identified(username: string): Promise<Browser> {
    const browser = await openExperience(service, spa.id);
    const verification = await passwordVerification(browser, { type: 'username', value: username }, password);
    expectStatus(verification, 200);
    expectStatus(await identify(browser, { verificationId: verification.body.verificationId }), 204);
    return browser;
  }

  /** A user holding a passkey of `authenticator`, registered through the sign-in flow. */
  async function userWithPasskey(authenticator: SoftwareAuthenticator) {
    const username = unique('passkey');
    const user = await createUser(service, { username, password });
    const browser = await identified(username);
    const started = await browser.call('post', 'api/experience/verification/web-authn/registration');
    expectStatus(started, 200);
    const { verificationId, registrationOptions } = started.body;
    const verified = await browser.call('post', 'api/experience/verification/web-authn/registration/verify', {
      verificationId,
      payload: authenticator.register(registrationOptions),
    });
    expectStatus(verified, 200);
    expectStatus(await browser.call('post', 'api/experience/profile/mfa', { type: 'WebAuthn', verificationId }), 204);
    return { user, username, browser };
  }

  it('registers a passkey when the policy suggests one: relying party from ENDPOINT, bound at submit with User.Data.Updated', async () => {
    const authenticator = new SoftwareAuthenticator(service.url);
    const username = unique('passkey');
    const user = await createUser(service, { username, password });
    const browser = await identified(username);

    const owed = await browser.call('post', 'api/experience/submit');
    expectError(owed, 422, 'user.suggest_mfa');
    expect(owed.body.data).to.deep.equal({ availableFactors: ['WebAuthn'], skippable: true });

    const started = await browser.call('post', 'api/experience/verification/web-authn/registration');
    expectStatus(started, 200);
    const { verificationId, registrationOptions } = started.body;
    expect(registrationOptions.rp).to.deep.equal({ id: '127.0.0.1', name: new URL(service.url).host });
    expect(registrationOptions.user.name).to.equal(username);
    expect(registrationOptions.challenge).to.match(/^[\w-]{32,}$/);
    expect(registrationOptions.attestation).to.equal('none');

    // An answer signed for another site (origin) is refused, and nothing can be bound.
    const elsewhere = new SoftwareAuthenticator('https://evil.example');
    expectError(
      await browser.call('post', 'api/experience/verification/web-authn/registration/verify', {
        verificationId,
        payload: elsewhere.register(registrationOptions),
      }),
      400,
      'session.mfa.webauthn_verification_failed',
    );
    expectError(
      await browser.call('post', 'api/experience/profile/mfa', { type: 'WebAuthn', verificationId }),
      400,
      'session.verification_failed',
    );

    const payload = authenticator.register(registrationOptions);
    const verified = await browser.call('post', 'api/experience/verification/web-authn/registration/verify', {
      verificationId,
      payload,
    });
    expectStatus(verified, 200);
    expect(verified.body).to.deep.equal({ verificationId });
    expectStatus(await browser.call('post', 'api/experience/profile/mfa', { type: 'WebAuthn', verificationId }), 204);
    expect((await service.api.get(`users/${user.id}/mfa-verifications`)).body).to.deep.equal([]);

    const { payloads } = await events.expect(['User.Data.Updated', 'PostSignIn'], () => submitToApplication(browser));
    expect(payloads['User.Data.Updated'][0].data.id).to.equal(user.id);
    const factors = await service.api.get(`users/${user.id}/mfa-verifications`);
    expectStatus(factors, 200);
    expect(factors.body).to.have.length(1);
    expect(factors.body[0]).to.have.keys('id', 'type', 'createdAt');
    expect(factors.body[0].type).to.equal('WebAuthn');
    expect(JSON.stringify(factors.body)).to.not.include(payload.id);
  });

  it('asks for the passkey at the next sign-in and accepts a signed answer; a replayed counter or a foreign key is refused', async () => {
    const authenticator = new SoftwareAuthenticator(service.url);
    const { user, username, browser: first } = await userWithPasskey(authenticator);
    await submitToApplication(first);

    const browser = await identified(username);
    const owed = await browser.call('post', 'api/experience/submit');
    expectError(owed, 403, 'session.mfa.require_mfa_verification');
    expect(owed.body.data.availableFactors).to.deep.equal(['WebAuthn']);

    const started = await browser.call('post', 'api/experience/verification/web-authn/authentication');
    expectStatus(started, 200);
    const { verificationId, authenticationOptions } = started.body;
    expect(authenticationOptions.allowCredentials).to.deep.equal([
      { id: authenticator.credentials[0].id.toString('base64url'), type: 'public-key', transports: ['internal'] },
    ]);

    // Another authenticator's key, claiming this credential id: the signature does not verify.
    const forger = new SoftwareAuthenticator(service.url);
    forger.register({ challenge: 'x', rp: { id: '127.0.0.1' }, user: { id: user.id } });
    const forged = forger.authenticate(authenticationOptions, { credential: forger.credentials[0] });
    forged.id = authenticator.credentials[0].id.toString('base64url');
    forged.rawId = forged.id;
    const verifyPath = 'api/experience/verification/web-authn/authentication/verify';
    expectError(
      await browser.call('post', verifyPath, { verificationId, payload: forged }),
      400,
      'session.mfa.webauthn_verification_failed',
    );
    expectError(await browser.call('post', 'api/experience/submit'), 403, 'session.mfa.require_mfa_verification');

    const answer = authenticator.authenticate(authenticationOptions);
    expectStatus(await browser.call('post', verifyPath, { verificationId, payload: answer }), 200);
    await submitToApplication(browser);

    // A later sign-in whose answer carries a counter that did not move (a cloned authenticator): refused.
    const again = await identified(username);
    const second = await again.call('post', 'api/experience/verification/web-authn/authentication');
    expectStatus(second, 200);
    authenticator.credentials[0].signCount = 0;
    const stale = authenticator.authenticate(second.body.authenticationOptions);
    expectError(
      await again.call('post', verifyPath, { verificationId: second.body.verificationId, payload: stale }),
      400,
      'session.mfa.webauthn_verification_failed',
    );
    const fresh = authenticator.authenticate(second.body.authenticationOptions);
    expectStatus(
      await again.call('post', verifyPath, { verificationId: second.body.verificationId, payload: fresh }),
      200,
    );
  });

  it('bad requests: no user identified, a malformed payload, another ceremony, another interaction', async () => {
    const fresh = await openExperience(service, spa.id);
    expectError(
      await fresh.call('post', 'api/experience/verification/web-authn/registration'),
      404,
      'session.identifier_not_found',
    );
    const authenticator = new SoftwareAuthenticator(service.url);
    const { browser } = await userWithPasskey(authenticator);
    const started = await browser.call('post', 'api/experience/verification/web-authn/registration');
    const { verificationId } = started.body;
    expectError(
      await browser.call('post', 'api/experience/verification/web-authn/registration/verify', {
        verificationId,
        payload: { type: 'WebAuthn', id: 'not base64url!' },
      }),
      400,
      'guard.invalid_input',
    );
    expectError(
      await browser.call('post', 'api/experience/verification/web-authn/authentication/verify', {
        verificationId,
        payload: authenticator.authenticate({ challenge: 'x' }),
      }),
      404,
      'session.verification_session_not_found',
    );
  });
});
