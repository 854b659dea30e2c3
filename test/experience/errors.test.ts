import { expect } from 'chai';

import { expectError, expectStatus } from '../support/expect.ts';
import { startService, type TestService } from '../support/service.ts';
import { ifSet, unique } from '../support/values.ts';
import { Browser } from './browser.ts';
import {
  createSpa,
  createUser,
  identify,
  newEmail,
  openExperience,
  passwordVerification,
  sendCode,
  submitToApplication,
  verifyEmail,
} from './experience-helpers.ts';

/** Every experience route, with a body that passes validation, so only the session decides the answer. */
const routes: Array<{ method: 'get' | 'post' | 'put'; path: string; body?: unknown }> = [
  { method: 'put', path: 'api/experience', body: { interactionEvent: 'SignIn' } },
  { method: 'put', path: 'api/experience/interaction-event', body: { interactionEvent: 'Register' } },
  { method: 'get', path: 'api/experience/interaction' },
  { method: 'post', path: 'api/experience/identification', body: {} },
  { method: 'post', path: 'api/experience/profile', body: { type: 'username', value: 'someone' } },
  { method: 'put', path: 'api/experience/profile/password', body: { password: 'Fresh-Meadow-42' } },
  { method: 'post', path: 'api/experience/submit' },
  {
    method: 'post',
    path: 'api/experience/verification/password',
    body: { identifier: { type: 'username', value: 'someone' }, password: 'x' },
  },
  {
    method: 'post',
    path: 'api/experience/verification/new-password-identity',
    body: { identifier: { type: 'username', value: 'someone' }, password: 'Fresh-Meadow-42' },
  },
  {
    method: 'post',
    path: 'api/experience/verification/verification-code',
    body: { identifier: { type: 'email', value: 'nobody@example.com' }, interactionEvent: 'SignIn' },
  },
  {
    method: 'post',
    path: 'api/experience/verification/verification-code/verify',
    body: { identifier: { type: 'email', value: 'nobody@example.com' }, verificationId: 'abcdef', code: '123456' },
  },
];

describe('experience API: errors', () => {
  let service: TestService;
  let app: { id: string };
  before(async () => {
    service = await startService();
    app = await createSpa(service);
  });
  after(() => ifSet(service)?.stop());

  describe('sessions', () => {
    it('answers 400 session.not_found on every experience route without the _interaction cookie', async () => {
      const browser = new Browser(service);
      for (const { method, path, body } of routes) {
        const response = await browser.call(method, path, body);
        expectError(response, 400, 'session.not_found');
      }
    });

    it('answers 404 session.interaction_not_found on every route but PUT /api/experience before the experience starts', async () => {
      const browser = await openExperience(service, app.id, null);
      for (const { method, path, body } of routes.slice(1)) {
        expectError(await browser.call(method, path, body), 404, 'session.interaction_not_found');
      }
      expectStatus(await browser.call('put', 'api/experience', { interactionEvent: 'SignIn' }), 204);
      expectStatus(await browser.call('get', 'api/experience/interaction'), 200);
    });

    it('answers session.not_found once the interaction has been completed', async () => {
      const username = unique('user');
      await createUser(service, { username, password: 'Amber-Falcon-31' });
      const browser = await openExperience(service, app.id);
      const verification = await passwordVerification(
        browser,
        { type: 'username', value: username },
        'Amber-Falcon-31',
      );
      expectStatus(await identify(browser, { verificationId: verification.body.verificationId }), 204);
      await submitToApplication(browser);
      expectError(await browser.call('get', 'api/experience/interaction'), 400, 'session.not_found');
      expectError(await browser.call('post', 'api/experience/submit'), 400, 'session.not_found');
    });
  });

  describe('password sign-in', () => {
    it('refuses a wrong password with 422 session.invalid_credentials', async () => {
      const username = unique('user');
      await createUser(service, { username, password: 'Amber-Falcon-31' });
      const browser = await openExperience(service, app.id);
      expectError(
        await passwordVerification(browser, { type: 'username', value: username }, 'Amber-Falcon-32'),
        422,
        'session.invalid_credentials',
      );
    });

    it('answers an unknown username exactly as a wrong password (no enumeration)', async () => {
      const username = unique('user');
      await createUser(service, { username, password: 'Amber-Falcon-31' });
      const browser = await openExperience(service, app.id);
      const wrong = await passwordVerification(browser, { type: 'username', value: username }, 'Amber-Falcon-32');
      const unknown = await passwordVerification(
        browser,
        { type: 'username', value: unique('ghost') },
        'Amber-Falcon-32',
      );
      expectError(unknown, 422, 'session.invalid_credentials');
      expect(unknown.body).to.deep.equal(wrong.body);

      const unknownEmail = await passwordVerification(
        browser,
        { type: 'email', value: newEmail('ghost') },
        'Amber-Falcon-32',
      );
      expectError(unknownEmail, 422, 'session.invalid_credentials');
      expect(unknownEmail.body).to.deep.equal(wrong.body);
    });

    it('refuses a suspended user with the right password: 401 user.suspended', async () => {
      const username = unique('user');
      const primaryEmail = newEmail();
      const user = await createUser(service, { username, primaryEmail, password: 'Amber-Falcon-31' });
      expectStatus(await service.api.patch(`users/${user.id}/is-suspended`, { json: { isSuspended: true } }), 200);

      const browser = await openExperience(service, app.id);
      expectError(
        await passwordVerification(browser, { type: 'username', value: username }, 'Amber-Falcon-31'),
        401,
        'user.suspended',
      );
      expectError(
        await passwordVerification(browser, { type: 'email', value: primaryEmail }, 'Amber-Falcon-31'),
        401,
        'user.suspended',
      );
      // The wrong password tells nothing about the account.
      expectError(
        await passwordVerification(browser, { type: 'username', value: username }, 'Amber-Falcon-30'),
        422,
        'session.invalid_credentials',
      );

      // Signing in by email code stops at identification.
      const codeBrowser = await openExperience(service, app.id);
      const verificationId = await verifyEmail(service, codeBrowser, primaryEmail, 'SignIn');
      expectError(await identify(codeBrowser, { verificationId }), 401, 'user.suspended');

      // Reactivated, the same password signs in.
      expectStatus(await service.api.patch(`users/${user.id}/is-suspended`, { json: { isSuspended: false } }), 200);
      expectStatus(await passwordVerification(browser, { type: 'username', value: username }, 'Amber-Falcon-31'), 200);
    });
  });

  describe('identification and submit', () => {
    it('answers 404 session.verification_session_not_found for an unknown or missing verificationId', async () => {
      const browser = await openExperience(service, app.id);
      expectError(
        await identify(browser, { verificationId: 'no-such-verification' }),
        404,
        'session.verification_session_not_found',
      );
      expectError(await identify(browser, {}), 404, 'session.verification_session_not_found');

      const register = await openExperience(service, app.id, 'Register');
      expectError(
        await identify(register, { verificationId: 'no-such-verification' }),
        404,
        'session.verification_session_not_found',
      );
    });

    it('answers 400 session.verification_failed for a code verification that was sent but not verified', async () => {
      const primaryEmail = newEmail();
      await createUser(service, { primaryEmail, password: 'Amber-Falcon-31' });
      const browser = await openExperience(service, app.id);
      const sent = await sendCode(browser, primaryEmail, 'SignIn');
      expectStatus(sent, 200);
      expectError(
        await identify(browser, { verificationId: sent.body.verificationId }),
        400,
        'session.verification_failed',
      );
    });

    it('answers 404 session.identifier_not_found to a submit before identification', async () => {
      for (const event of ['SignIn', 'Register', 'ForgotPassword'] as const) {
        const browser = await openExperience(service, app.id, event);
        expectError(await browser.call('post', 'api/experience/submit'), 404, 'session.identifier_not_found');
      }
      // A verified password is not an identification yet.
      const username = unique('user');
      await createUser(service, { username, password: 'Amber-Falcon-31' });
      const browser = await openExperience(service, app.id);
      expectStatus(await passwordVerification(browser, { type: 'username', value: username }, 'Amber-Falcon-31'), 200);
      expectError(await browser.call('post', 'api/experience/submit'), 404, 'session.identifier_not_found');
    });
  });

  describe('password reset (Logto parity)', () => {
    it('refuses to switch to or from ForgotPassword with interaction-event: 400 session.not_supported_for_forgot_password', async () => {
      const reset = await openExperience(service, app.id, 'ForgotPassword');
      expectError(
        await reset.call('put', 'api/experience/interaction-event', { interactionEvent: 'SignIn' }),
        400,
        'session.not_supported_for_forgot_password',
      );
      const signIn = await openExperience(service, app.id, 'SignIn');
      expectError(
        await signIn.call('put', 'api/experience/interaction-event', { interactionEvent: 'ForgotPassword' }),
        400,
        'session.not_supported_for_forgot_password',
      );
      // Between sign-in and registration it is allowed.
      expectStatus(await signIn.call('put', 'api/experience/interaction-event', { interactionEvent: 'Register' }), 204);
    });

    it('refuses to identify a reset by password: 422 session.not_supported_for_forgot_password', async () => {
      const username = unique('user');
      await createUser(service, { username, password: 'Amber-Falcon-31' });
      const browser = await openExperience(service, app.id, 'ForgotPassword');
      const verification = await passwordVerification(
        browser,
        { type: 'username', value: username },
        'Amber-Falcon-31',
      );
      expectStatus(verification, 200);
      expectError(
        await identify(browser, { verificationId: verification.body.verificationId }),
        422,
        'session.not_supported_for_forgot_password',
      );
    });
  });

  describe('registration', () => {
    it('refuses a taken username: 422 user.username_already_in_use', async () => {
      const username = unique('user');
      await createUser(service, { username, password: 'Amber-Falcon-31' });
      const browser = await openExperience(service, app.id, 'Register');
      const response = await browser.call('post', 'api/experience/verification/new-password-identity', {
        identifier: { type: 'username', value: username },
        password: 'Copper-Lantern-58',
      });
      expectError(response, 422, 'user.username_already_in_use');
    });

    it('refuses a weak password: 422 password.rejected with the reasons', async () => {
      const browser = await openExperience(service, app.id, 'Register');
      const username = unique('user');
      // Logto's rule: restricted phrases refuse a password they cover all but three characters of.
      for (const password of ['short', 'aaaaaaaaaaaa', 'xyz12345678', `${username}-9`]) {
        const response = await browser.call('post', 'api/experience/verification/new-password-identity', {
          identifier: { type: 'username', value: username },
          password,
        });
        expectError(response, 422, 'password.rejected');
      }
      const tooShort = await browser.call('post', 'api/experience/verification/new-password-identity', {
        identifier: { type: 'username', value: username },
        password: 'short',
      });
      expect(tooShort.body.data.issues.map((issue: { code: string }) => issue.code)).to.include(
        'password_rejected.too_short',
      );
      // The name stays free.
      const accepted = await browser.call('post', 'api/experience/verification/new-password-identity', {
        identifier: { type: 'username', value: username },
        password: 'Copper-Lantern-58',
      });
      expectStatus(accepted, 200);
    });

    it('registers by email code when sign-up wants a password: missing_profile, then profile password, then identification', async () => {
      const patched = await service.api.patch('sign-in-exp', {
        json: { signUp: { identifiers: ['email'], password: true, verify: true } },
      });
      expectStatus(patched, 200);
      try {
        const email = newEmail('reg');
        const browser = await openExperience(service, app.id, 'Register');
        const verificationId = await verifyEmail(service, browser, email, 'Register');

        const missing = await identify(browser, { verificationId });
        expectError(missing, 422, 'user.missing_profile');
        expect(missing.body.data.missingProfile).to.deep.equal(['password']);

        // A weak password is refused here too.
        expectError(
          await browser.call('post', 'api/experience/profile', { type: 'password', value: 'short' }),
          422,
          'password.rejected',
        );
        expectStatus(
          await browser.call('post', 'api/experience/profile', { type: 'password', value: 'Copper-Lantern-58' }),
          204,
        );
        const created = await identify(browser, {});
        expectStatus(created, 201);
        await submitToApplication(browser);

        const [user] = (await service.api.get('users', { searchParams: { search: email } })).body as Array<{
          primaryEmail: string;
          hasPassword: boolean;
        }>;
        expect(user).to.include({ primaryEmail: email, hasPassword: true });
        // And the account signs in with that email and password.
        const again = await openExperience(service, app.id);
        expectStatus(await passwordVerification(again, { type: 'email', value: email }, 'Copper-Lantern-58'), 200);
      } finally {
        await service.api.patch('sign-in-exp', {
          json: { signUp: { identifiers: ['username'], password: true, verify: false } },
        });
      }
    });
  });

  describe('malformed bodies', () => {
    const malformed: Array<{ method: 'post' | 'put'; path: string; body: unknown }> = [
      { method: 'put', path: 'api/experience', body: {} },
      { method: 'put', path: 'api/experience', body: { interactionEvent: 'Login' } },
      { method: 'put', path: 'api/experience', body: { interactionEvent: 'signin' } },
      { method: 'put', path: 'api/experience', body: { interactionEvent: 'SignIn', extra: true } },
      { method: 'put', path: 'api/experience', body: [] },
      { method: 'put', path: 'api/experience', body: ['SignIn'] },
      { method: 'put', path: 'api/experience/interaction-event', body: { interactionEvent: 7 } },
      { method: 'post', path: 'api/experience/verification/password', body: {} },
      { method: 'post', path: 'api/experience/verification/password', body: { identifier: 'alice', password: 'p' } },
      {
        method: 'post',
        path: 'api/experience/verification/password',
        body: { identifier: { type: 'fax', value: 'x' }, password: 'p' },
      },
      {
        method: 'post',
        path: 'api/experience/verification/password',
        body: { identifier: { type: 'username', value: '' }, password: 'p' },
      },
      {
        method: 'post',
        path: 'api/experience/verification/password',
        body: { identifier: { type: 'username', value: 'alice' }, password: 123 },
      },
      {
        method: 'post',
        path: 'api/experience/verification/password',
        body: { identifier: { type: 'username', value: 'alice' }, password: '' },
      },
      {
        method: 'post',
        path: 'api/experience/verification/password',
        body: { identifier: { type: 'username', value: 'alice' }, password: 'x'.repeat(10_000) },
      },
      {
        method: 'post',
        path: 'api/experience/verification/password',
        body: { identifier: { type: 'username', value: 'a'.repeat(5000) }, password: 'p' },
      },
      {
        method: 'post',
        path: 'api/experience/verification/password',
        body: { identifier: { type: 'username', value: null }, password: 'p' },
      },
      {
        method: 'post',
        path: 'api/experience/verification/new-password-identity',
        body: { identifier: { type: 'email', value: 'a@example.com' }, password: 'Copper-Lantern-58' },
      },
      {
        method: 'post',
        path: 'api/experience/verification/new-password-identity',
        body: { identifier: { type: 'username', value: 'has space' }, password: 'Copper-Lantern-58' },
      },
      {
        method: 'post',
        path: 'api/experience/verification/new-password-identity',
        body: { identifier: { type: 'username', value: 'bob' } },
      },
      {
        method: 'post',
        path: 'api/experience/verification/verification-code',
        body: { identifier: { type: 'email', value: 'not-an-email' }, interactionEvent: 'SignIn' },
      },
      {
        method: 'post',
        path: 'api/experience/verification/verification-code',
        body: { identifier: { type: 'email', value: 'a@example.com' } },
      },
      {
        method: 'post',
        path: 'api/experience/verification/verification-code',
        body: { identifier: { type: 'username', value: 'alice' }, interactionEvent: 'SignIn' },
      },
      {
        method: 'post',
        path: 'api/experience/verification/verification-code',
        body: { identifier: { type: 'phone', value: 'call me' }, interactionEvent: 'SignIn' },
      },
      {
        method: 'post',
        path: 'api/experience/verification/verification-code/verify',
        body: { identifier: { type: 'email', value: 'a@example.com' }, verificationId: 'x', code: 123456 },
      },
      {
        method: 'post',
        path: 'api/experience/verification/verification-code/verify',
        body: { identifier: { type: 'email', value: 'a@example.com' }, code: '123456' },
      },
      { method: 'post', path: 'api/experience/identification', body: { verificationId: 42 } },
      { method: 'post', path: 'api/experience/identification', body: { verificationId: '' } },
      { method: 'post', path: 'api/experience/identification', body: { linkSocialIdentity: 'yes' } },
      { method: 'post', path: 'api/experience/identification', body: { verificationId: 'x'.repeat(1000) } },
      { method: 'post', path: 'api/experience/profile', body: {} },
      { method: 'post', path: 'api/experience/profile', body: { type: 'nickname', value: 'x' } },
      { method: 'post', path: 'api/experience/profile', body: { type: 'email' } },
      { method: 'post', path: 'api/experience/profile', body: { type: 'email', value: 'a@example.com' } },
      { method: 'post', path: 'api/experience/profile', body: { type: 'username', value: 42 } },
      { method: 'post', path: 'api/experience/profile', body: { type: 'password' } },
      { method: 'put', path: 'api/experience/profile/password', body: {} },
      { method: 'put', path: 'api/experience/profile/password', body: { password: ['a'] } },
    ];

    it('answers 400 guard.invalid_input to bodies that break the schema', async () => {
      const browser = await openExperience(service, app.id);
      for (const { method, path, body } of malformed) {
        const response = await browser.call(method, path, body);
        expect(
          response.statusCode,
          `${method} ${path} ${JSON.stringify(body).slice(0, 100)}: ${JSON.stringify(response.body)}`,
        ).to.equal(400);
        expect(response.body.code, `${method} ${path} ${JSON.stringify(body).slice(0, 100)}`).to.equal(
          'guard.invalid_input',
        );
      }
    });

    it('answers 400 guard.invalid_input to bodies that are not JSON objects, 415 to bodies that are not JSON', async () => {
      const browser = await openExperience(service, app.id);
      const raw = (path: string, body: string, contentType = 'application/json') =>
        browser.client(path, { method: 'put', body, headers: { 'content-type': contentType } }) as unknown as Promise<{
          statusCode: number;
          body: { code: string };
        }>;
      for (const body of [
        '{"interactionEvent":',
        'null',
        '"SignIn"',
        '42',
        'true',
        '{interactionEvent: SignIn}',
        '\u0000\u0001',
      ]) {
        const response = await raw('api/experience', body);
        expect(response.statusCode, `${JSON.stringify(body)}: ${JSON.stringify(response.body)}`).to.equal(400);
        expect(response.body.code, JSON.stringify(body)).to.equal('guard.invalid_input');
      }
      // JSON sent as something else is not read: 415.
      for (const contentType of ['text/plain', 'application/x-www-form-urlencoded']) {
        const response = await raw('api/experience', '{"interactionEvent":"SignIn"}', contentType);
        expect(response.statusCode, contentType).to.equal(415);
        expect(response.body.code).to.equal('request.unsupported_media_type');
      }
    });

    it('never answers 500 to odd but well-formed JSON', async () => {
      const browser = await openExperience(service, app.id);
      const raw = (method: 'post' | 'put', path: string, body: string) =>
        browser.client(path, { method, body, headers: { 'content-type': 'application/json' } }) as unknown as Promise<{
          statusCode: number;
          body: { code?: string };
        }>;
      const odd: Array<['post' | 'put', string, string]> = [
        ['put', 'api/experience', '{"interactionEvent":"SignIn","__proto__":{"admin":true}}'],
        ['put', 'api/experience', '{"constructor":{"prototype":{"x":1}},"interactionEvent":"SignIn"}'],
        [
          'post',
          'api/experience/verification/password',
          `{"identifier":${'['.repeat(2000)}${']'.repeat(2000)},"password":"p"}`,
        ],
        ['post', 'api/experience/identification', '{"verificationId":"toString"}'],
        ['post', 'api/experience/identification', '{"verificationId":"__proto__"}'],
        [
          'post',
          'api/experience/verification/verification-code/verify',
          '{"identifier":{"type":"email","value":"a@example.com"},"verificationId":"__proto__","code":"123456"}',
        ],
        [
          'post',
          'api/experience/verification/verification-code/verify',
          '{"identifier":{"type":"email","value":"a@example.com"},"verificationId":"constructor","code":"123456"}',
        ],
      ];
      for (const [method, path, body] of odd) {
        const response = await raw(method, path, body);
        expect(response.statusCode, `${path} ${body.slice(0, 80)}: ${JSON.stringify(response.body)}`).to.be.within(
          200,
          499,
        );
      }
    });

    it('treats inherited property names as unknown verification ids: 404 session.verification_session_not_found', async () => {
      const browser = await openExperience(service, app.id);
      for (const verificationId of ['toString', '__proto__', 'constructor', 'hasOwnProperty']) {
        expectError(await identify(browser, { verificationId }), 404, 'session.verification_session_not_found');
        const verify = await browser.call('post', 'api/experience/verification/verification-code/verify', {
          identifier: { type: 'email', value: 'a@example.com' },
          verificationId,
          code: '123456',
        });
        expectError(verify, 404, 'session.verification_session_not_found');
      }
    });
  });
});
