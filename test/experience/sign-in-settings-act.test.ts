import { expect } from 'chai';

import { expectError, expectStatus } from '../support/expect.ts';
import { startService, type TestService } from '../support/service.ts';
import { ifSet, omit, unique } from '../support/values.ts';
import type { Browser } from './browser.ts';
import {
  createSpa,
  createUser,
  identify,
  newEmail,
  openExperience,
  passwordVerification,
  sendCode,
  verifyEmail,
} from './experience-helpers.ts';

/**
 * Logto's sign-in experience settings (its integration tests set them) and what each does at
 * sign-in: MFA prompt policies, the organization-required policy, sign-up rules and secondary
 * identifiers, the email blocklist, single sign-on, a partial password policy, the support URL.
 */
describe('sign-in experience settings act at sign-in', () => {
  let service: TestService;
  let app: { id: string };
  let defaults: Record<string, unknown>;
  before(async () => {
    service = await startService();
    app = await createSpa(service);
    defaults = omit((await service.api.get<Record<string, unknown>>('sign-in-exp')).body, 'tenantId', 'id');
  });
  after(() => ifSet(service)?.stop());
  afterEach(async () => {
    expectStatus(await service.api.patch('sign-in-exp', { json: defaults }), 200);
  });

  const patch = (json: Record<string, unknown>) => service.api.patch<Record<string, unknown>>('sign-in-exp', { json });
  const password = 'a-Long-pass-9183';

  /** Registers a username + password account through the Experience API, up to (not including) submit. */
  async function registerByUsername(browser: Browser, name = unique('user').replaceAll('-', '_')) {
    const proposed = await browser.call('post', 'api/experience/verification/new-password-identity', {
      identifier: { type: 'username', value: name },
      password,
    });
    expectStatus(proposed, 200);
    return identify(browser, { verificationId: proposed.body.verificationId });
  }

  async function signInByUsername(name: string): Promise<Browser> {
    const browser = await openExperience(service, app.id);
    const verified = await passwordVerification(browser, { type: 'username', value: name }, password);
    expectStatus(verified, 200);
    expectStatus(await identify(browser, { verificationId: verified.body.verificationId }), 204);
    return browser;
  }

  describe('MFA prompt policies', () => {
    it('PromptOnlyAtSignIn lets a registration finish and asks at the next sign-in, skippably', async () => {
      expectStatus(await patch({ mfa: { factors: ['Totp'], policy: 'PromptOnlyAtSignIn' } }), 200);
      const name = unique('late').replaceAll('-', '_');
      const registering = await openExperience(service, app.id, 'Register');
      expectStatus(await registerByUsername(registering, name), 201);
      expectStatus(await registering.call('post', 'api/experience/submit'), 200);

      const signingIn = await signInByUsername(name);
      const owed = await signingIn.call('post', 'api/experience/submit');
      expectError(owed, 422, 'user.suggest_mfa');
      expect(owed.body.data).to.deep.include({ skippable: true });
      expectStatus(await signingIn.call('post', 'api/experience/profile/mfa/mfa-skipped'), 204);
      expectStatus(await signingIn.call('post', 'api/experience/submit'), 200);
    });

    it('PromptAtSignInAndSignUp asks at registration, and may be declined', async () => {
      expectStatus(await patch({ mfa: { factors: ['Totp'], policy: 'PromptAtSignInAndSignUp' } }), 200);
      const browser = await openExperience(service, app.id, 'Register');
      expectStatus(await registerByUsername(browser), 201);
      const owed = await browser.call('post', 'api/experience/submit');
      expectError(owed, 422, 'user.suggest_mfa');
      expect(owed.body.data).to.deep.include({ skippable: true });
    });

    it('NoPrompt asks nothing; Mandatory cannot be declined', async () => {
      expectStatus(await patch({ mfa: { factors: ['Totp'], policy: 'NoPrompt' } }), 200);
      const quiet = await openExperience(service, app.id, 'Register');
      expectStatus(await registerByUsername(quiet), 201);
      expectStatus(await quiet.call('post', 'api/experience/submit'), 200);

      expectStatus(await patch({ mfa: { factors: ['Totp'], policy: 'Mandatory' } }), 200);
      const strict = await openExperience(service, app.id, 'Register');
      expectStatus(await registerByUsername(strict), 201);
      const owed = await strict.call('post', 'api/experience/submit');
      expectError(owed, 422, 'user.missing_mfa');
      expect(owed.body.data).to.not.have.property('skippable');
      expectError(
        await strict.call('post', 'api/experience/profile/mfa/mfa-skipped'),
        422,
        'session.mfa.mfa_policy_not_user_controlled',
      );
    });

    it("refuses adaptive MFA's non-skippable prompts (adaptive MFA is not offered), as Logto with it off", async () => {
      for (const policy of ['PromptAtSignInAndSignUpMandatory', 'PromptOnlyAtSignInMandatory']) {
        expectError(
          await patch({ mfa: { factors: ['Totp'], policy } }),
          422,
          'sign_in_experiences.non_adaptive_mfa_requires_skippable_policy',
        );
      }
      expectError(await patch({ adaptiveMfa: { enabled: true } }), 422, 'sign_in_experiences.adaptive_mfa_not_offered');
      // Off, as Logto's set-ups send it, is taken and shown.
      const off = await patch({ adaptiveMfa: { enabled: false }, mfa: { factors: ['Totp'], policy: 'Mandatory' } });
      expectStatus(off, 200);
      expect(off.body.adaptiveMfa).to.deep.equal({ enabled: false });
    });

    it('organizationRequiredMfaPolicy NoPrompt stops an MFA-requiring organization from asking its members', async () => {
      const name = unique('member').replaceAll('-', '_');
      const user = await createUser(service, { username: name, password });
      const organization = await service.api.post<{ id: string }>('organizations', {
        json: { name: unique('mfa-org'), isMfaRequired: true },
      });
      expectStatus(organization, 201);
      const added = await service.api.post(`organizations/${organization.body.id}/users`, {
        json: { userIds: [user.id] },
      });
      expect(added.statusCode).to.be.oneOf([200, 201]);

      expectStatus(await patch({ mfa: { factors: ['Totp'], policy: 'NoPrompt' } }), 200);
      const asked = await signInByUsername(name);
      expectError(await asked.call('post', 'api/experience/submit'), 422, 'user.missing_mfa');

      const updated = await patch({
        mfa: { factors: ['Totp'], policy: 'NoPrompt', organizationRequiredMfaPolicy: 'NoPrompt' },
      });
      expectStatus(updated, 200);
      expect(updated.body.mfa).to.deep.include({ organizationRequiredMfaPolicy: 'NoPrompt' });
      const notAsked = await signInByUsername(name);
      expectStatus(await notAsked.call('post', 'api/experience/submit'), 200);
    });
  });

  describe('sign-up rules', () => {
    it('an email or phone sign-up identifier must be verified (400 passwordless_requires_verify)', async () => {
      for (const signUp of [
        { identifiers: ['email'], password: false, verify: false },
        { identifiers: ['username'], password: true, verify: false, secondaryIdentifiers: [{ identifier: 'email' }] },
        {
          identifiers: ['username'],
          password: true,
          verify: true,
          secondaryIdentifiers: [{ identifier: 'phone', verify: false }],
        },
      ]) {
        expectError(await patch({ signUp }), 400, 'sign_in_experiences.passwordless_requires_verify');
      }
      expectError(
        await patch({
          signUp: {
            identifiers: ['email'],
            password: true,
            verify: true,
            secondaryIdentifiers: [{ identifier: 'email' }],
          },
        }),
        400,
        'sign_in_experiences.duplicated_sign_up_identifiers',
      );
      expectError(
        await patch({
          signUp: { identifiers: [], password: true, verify: true, secondaryIdentifiers: [{ identifier: 'username' }] },
        }),
        400,
        'sign_in_experiences.missing_sign_up_identifiers',
      );
    });

    it('a secondary identifier is asked for before the account is made, then registration finishes', async () => {
      const signUp = {
        identifiers: ['username'],
        password: true,
        verify: true,
        secondaryIdentifiers: [{ identifier: 'email', verify: true }],
      };
      const updated = await patch({ signUp });
      expectStatus(updated, 200);
      expect(updated.body.signUp).to.deep.equal(signUp);

      const browser = await openExperience(service, app.id, 'Register');
      const owed = await registerByUsername(browser);
      expectError(owed, 422, 'user.missing_profile');
      expect(owed.body.data).to.deep.equal({ missingProfile: ['email'] });

      const email = newEmail('second');
      const verificationId = await verifyEmail(service, browser, email, 'Register');
      expectStatus(await identify(browser, { verificationId }), 201);
      expectStatus(await browser.call('post', 'api/experience/submit'), 200);
      const [user] = (
        await service.api.get<Array<{ primaryEmail: string }>>('users', { searchParams: { search: email } })
      ).body;
      expect(user.primaryEmail).to.equal(email);
    });
  });

  describe('email blocklist policy', () => {
    it('keeps blocked domains, addresses and +tags out of registration, before a code is sent', async () => {
      const updated = await patch({
        emailBlocklistPolicy: { blockSubaddressing: true, customBlocklist: ['@blocked.test', 'someone@example.com'] },
      });
      expectStatus(updated, 200);
      expect(updated.body.emailBlocklistPolicy).to.deep.equal({
        blockSubaddressing: true,
        customBlocklist: ['@blocked.test', 'someone@example.com'],
      });
      const browser = await openExperience(service, app.id, 'Register');
      const blocked = `${unique('x')}@BLOCKED.test`;
      expectError(await sendCode(browser, blocked, 'Register'), 422, 'session.email_blocklist.email_not_allowed');
      expectError(
        await sendCode(browser, 'someone@example.com', 'Register'),
        422,
        'session.email_blocklist.email_not_allowed',
      );
      expectError(
        await sendCode(browser, `${unique('tag')}+news@example.com`, 'Register'),
        422,
        'session.email_blocklist.email_subaddressing_not_allowed',
      );
      const nothingSent = await service.api.get<unknown[]>('verification-messages', {
        searchParams: { recipient: blocked },
      });
      expect(nothingSent.body).to.deep.equal([]);
      expectStatus(await sendCode(browser, newEmail('fine'), 'Register'), 200);
    });

    it('an allowlist admits only its entries (wildcards too); an unsupported or malformed policy is refused', async () => {
      expectStatus(await patch({ emailBlocklistPolicy: { customAllowlist: ['@*.corp.test'] } }), 200);
      const browser = await openExperience(service, app.id, 'Register');
      expectError(
        await sendCode(browser, newEmail('outside'), 'Register'),
        422,
        'session.email_blocklist.email_not_allowed',
      );
      expectStatus(await sendCode(browser, `${unique('in')}@eu.corp.test`, 'Register'), 200);

      expectError(
        await patch({ emailBlocklistPolicy: { blockDisposableAddresses: true } }),
        400,
        'request.invalid_input',
      );
      expectError(
        await patch({ emailBlocklistPolicy: { customBlocklist: ['not an entry'] } }),
        400,
        'guard.invalid_input',
      );
    });
  });

  describe('single sign-on switch', () => {
    it('off: an SSO domain is not sent to its IdP and the page offers no SSO connector', async () => {
      const domain = `${unique('sso')}.test`;
      const connector = await service.api.post<{ id: string }>('sso-connectors', {
        json: {
          providerName: 'OIDC',
          connectorName: unique('corp'),
          domains: [domain],
          config: { clientId: 'id', clientSecret: 'secret', issuer: 'https://idp.invalid' },
        },
      });
      expect(connector.statusCode, JSON.stringify(connector.body)).to.be.oneOf([200, 201]);
      const email = `${unique('emp')}@${domain}`;

      const on = await openExperience(service, app.id, 'Register');
      const proven = await verifyEmail(service, on, email, 'Register');
      expectError(await identify(on, { verificationId: proven }), 422, 'session.sso_enabled');

      expectStatus(await patch({ singleSignOnEnabled: false }), 200);
      const page = await service.http.get<{ ssoConnectors: unknown[] }>('api/.well-known/sign-in-exp');
      expect(page.body.ssoConnectors).to.deep.equal([]);
      const off = await openExperience(service, app.id, 'Register');
      const provenAgain = await verifyEmail(service, off, email, 'Register');
      expectError(await identify(off, { verificationId: provenAgain }), 422, 'user.missing_profile');
    });
  });

  describe('other settings', () => {
    it('a partial password policy keeps the rest, and the words it adds are refused at registration', async () => {
      const before = (await service.api.get<{ passwordPolicy: Record<string, unknown> }>('sign-in-exp')).body
        .passwordPolicy;
      const updated = await patch({ passwordPolicy: { rejects: { words: ['acme'] } } });
      expectStatus(updated, 200);
      expect(updated.body.passwordPolicy).to.deep.equal({
        ...before,
        rejects: { ...(before.rejects as object), words: ['acme'] },
      });
      const browser = await openExperience(service, app.id, 'Register');
      const refused = await browser.call('post', 'api/experience/verification/new-password-identity', {
        identifier: { type: 'username', value: unique('acme').replaceAll('-', '_') },
        // Made of the word but two characters (Logto's tolerance is three).
        password: 'AcmeAcme-9',
      });
      expectError(refused, 422, 'password.rejected');
    });

    it("supportWebsiteUrl reaches the sign-in page's settings; '' clears a URL as null does", async () => {
      const set = await patch({
        supportWebsiteUrl: 'https://help.example.com',
        termsOfUseUrl: 'https://example.com/t',
      });
      expectStatus(set, 200);
      const page = await service.http.get<Record<string, unknown>>('api/.well-known/sign-in-exp');
      expect(page.body).to.deep.include({ supportWebsiteUrl: 'https://help.example.com' });
      const cleared = await patch({ supportWebsiteUrl: '', termsOfUseUrl: '', supportEmail: '' });
      expectStatus(cleared, 200);
      expect(cleared.body).to.deep.include({ supportWebsiteUrl: null, termsOfUseUrl: null, supportEmail: null });
      expectError(await patch({ supportWebsiteUrl: 'not a url' }), 400, 'guard.invalid_input');
    });
  });
});
