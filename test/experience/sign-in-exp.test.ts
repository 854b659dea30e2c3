import { expect } from 'chai';

import { expectError, expectStatus } from '../support/expect.ts';
import { startService, type TestService } from '../support/service.ts';
import { ifSet, omit, unique } from '../support/values.ts';
import {
  createSpa,
  createUser,
  identify,
  newEmail,
  openExperience,
  passwordVerification,
  signInWithPassword,
  verifyEmail,
} from './experience-helpers.ts';

type Method = { identifier: string; password: boolean; verificationCode: boolean; isPasswordPrimary: boolean };
type Settings = Record<string, unknown> & {
  signUp: { identifiers: string[]; password: boolean; verify: boolean };
  signIn: { methods: Method[] };
  forgotPasswordMethods: string[] | null;
  passwordPolicy: {
    length: { min: number; max: number };
    characterTypes: { min: number };
    rejects: Record<string, unknown>;
  };
  sentinelPolicy: { maxAttempts: number; lockoutDuration: number };
  mfa: { factors: string[]; policy: string };
};

const issueCodes = (body: { data?: { issues?: Array<{ code: string }> } }) =>
  (body.data?.issues ?? []).map((issue) => issue.code);

describe('management API: sign-in experience settings', () => {
  let service: TestService;
  let app: { id: string };
  /** Read by the first test; unset until then. */
  let defaults: Settings | undefined;
  before(async () => {
    service = await startService();
    app = await createSpa(service);
  });
  after(() => ifSet(service)?.stop());

  /** Puts every setting back as a fresh install has it. */
  async function restoreDefaults(): Promise<void> {
    if (!defaults) {
      return;
    }
    expectStatus(await service.api.patch('sign-in-exp', { json: omit(defaults, 'tenantId', 'id') }), 200);
  }
  afterEach(restoreDefaults);

  const current = async (): Promise<Settings> => {
    const response = await service.api.get<Settings>('sign-in-exp');
    expectStatus(response, 200);
    return response.body;
  };

  it('GET answers the fresh-install defaults', async () => {
    defaults = await current();
    expect(defaults.signUp).to.include({ password: true });
    expect(defaults.signUp.identifiers).to.deep.equal(['username']);

    const methods = defaults.signIn.methods;
    const byUsername = methods.find((method) => method.identifier === 'username');
    const byEmail = methods.find((method) => method.identifier === 'email');
    expect(byUsername, JSON.stringify(methods)).to.include({ password: true });
    expect(byEmail, JSON.stringify(methods)).to.include({ password: true, verificationCode: true });
    const byPhone = methods.find((method) => method.identifier === 'phone');
    expect(!byPhone || (!byPhone.password && !byPhone.verificationCode), 'no phone sign-in by default').to.equal(true);

    expect(defaults.forgotPasswordMethods).to.deep.equal(['EmailVerificationCode']);
    expect(defaults.mfa.factors).to.deep.equal([]);
    expect(defaults.sentinelPolicy).to.deep.equal({ maxAttempts: 10, lockoutDuration: 60 });
    expect(defaults.passwordPolicy.length.min).to.be.a('number');
  });

  it('GET and PATCH need a management token', async () => {
    expect((await service.http.get('api/sign-in-exp')).statusCode).to.equal(401);
    expect(
      (
        await service.http.patch('api/sign-in-exp', {
          json: { sentinelPolicy: { maxAttempts: 1, lockoutDuration: 1 } },
        })
      ).statusCode,
    ).to.equal(401);
    expect((await current()).sentinelPolicy).to.deep.equal({ maxAttempts: 10, lockoutDuration: 60 });
  });

  it('PATCH updates the fields given, keeps the others, and GET reflects it', async () => {
    const patch = {
      sentinelPolicy: { maxAttempts: 7, lockoutDuration: 30 },
      signIn: {
        methods: [{ identifier: 'username', password: true, verificationCode: false, isPasswordPrimary: true }],
      },
      forgotPasswordMethods: null,
      supportEmail: 'help@example.com',
    };
    const patched = await service.api.patch<Settings>('sign-in-exp', { json: patch });
    expectStatus(patched, 200);
    expect(patched.body).to.deep.include(patch);

    const after = await current();
    expect(after).to.deep.include(patch);
    expect(after.signUp).to.deep.equal(defaults!.signUp);
    expect(after.passwordPolicy).to.deep.equal(defaults!.passwordPolicy);
    expect(after.mfa).to.deep.equal(defaults!.mfa);
  });

  it('PATCH of one password policy section keeps the other sections', async () => {
    const patched = await service.api.patch<Settings>('sign-in-exp', {
      json: { passwordPolicy: { length: { min: 10, max: 64 } } },
    });
    expectStatus(patched, 200);
    const after = await current();
    expect(after.passwordPolicy.length).to.deep.equal({ min: 10, max: 64 });
    expect(after.passwordPolicy.characterTypes).to.deep.equal(defaults!.passwordPolicy.characterTypes);
    expect(after.passwordPolicy.rejects).to.deep.equal(defaults!.passwordPolicy.rejects);
  });

  it('PATCH accepts a sentinel policy with one field, as Logto does', async () => {
    const patched = await service.api.patch<Settings>('sign-in-exp', { json: { sentinelPolicy: { maxAttempts: 5 } } });
    expectStatus(patched, 200);
    expect((await current()).sentinelPolicy.maxAttempts).to.equal(5);
  });

  it('PATCH refuses unknown fields and invalid values with 400 guard.invalid_input, changing nothing', async () => {
    const before = await current();
    const bodies: unknown[] = [
      { colour: 'red' },
      { signUp: { identifiers: ['username'], password: true, verify: false, captcha: true } },
      {
        signIn: {
          methods: [
            { identifier: 'email', password: true, verificationCode: true, isPasswordPrimary: true, sso: true },
          ],
        },
      },
      { signIn: { methods: [], extra: 1 } },
      { sentinelPolicy: { maxAttempts: 3, lockoutDuration: 1, window: 5 } },
      { passwordPolicy: { length: { min: 8, max: 256, average: 20 } } },
      { passwordPolicy: { hints: true } },
      { mfa: { factors: [], policy: 'UserControlled', remember: true } },
      { sentinelPolicy: { maxAttempts: 0, lockoutDuration: 1 } },
      { sentinelPolicy: { maxAttempts: 'ten', lockoutDuration: 1 } },
      { sentinelPolicy: { maxAttempts: 3, lockoutDuration: -1 } },
      { signUp: { identifiers: ['fax'], password: true, verify: false } },
      {
        signIn: { methods: [{ identifier: 'fax', password: true, verificationCode: false, isPasswordPrimary: true }] },
      },
      { signIn: { methods: 'username' } },
      { passwordPolicy: { length: { min: 'eight', max: 256 } } },
      { mfa: { factors: ['Carrier pigeon'], policy: 'UserControlled' } },
      { forgotPasswordMethods: ['Telepathy'] },
      { supportEmail: 'not an email' },
      // Links the pages show: http(s) only, never a script or a local file.
      ...[
        'javascript:alert(1)',
        'data:text/html,<script>alert(1)</script>',
        'file:///etc/passwd',
        'ftp://a.test/t',
      ].flatMap((url) => [{ termsOfUseUrl: url }, { privacyPolicyUrl: url }, { supportWebsiteUrl: url }]),
      [],
    ];
    for (const body of bodies) {
      const response = await service.api.patch('sign-in-exp', { json: body });
      expect(response.statusCode, `${JSON.stringify(body)}: ${JSON.stringify(response.body)}`).to.equal(400);
      expect(response.body.code, JSON.stringify(body)).to.equal('guard.invalid_input');
    }
    expect(await current()).to.deep.equal(before);
  });

  it("takes Logto's custom UI settings only empty: custom UI assets are not hosted here", async () => {
    const cleared = await service.api.patch('sign-in-exp', {
      json: { customUiAssets: null, customUiCsp: { scriptSrc: [], connectSrc: [] } },
    });
    expectStatus(cleared, 200);
    expect(cleared.body).to.deep.include({ customUiAssets: null, customUiCsp: {} });
    for (const json of [
      { customUiCsp: { scriptSrc: ['https://cdn.example.com'] } },
      { customUiAssets: { id: 'assets-1', createdAt: 1 } },
    ]) {
      expectError(await service.api.patch('sign-in-exp', { json }), 400, 'request.invalid_input');
    }
    expect((await service.api.get('sign-in-exp')).body.customUiCsp).to.deep.equal({});
  });

  describe('the password policy applies everywhere a password is set', () => {
    beforeEach(async () => {
      const patched = await service.api.patch('sign-in-exp', {
        json: { passwordPolicy: { length: { min: 12, max: 256 } } },
      });
      expectStatus(patched, 200);
    });

    it('registration: a 10-character password is rejected as too short, a 12-character one accepted', async () => {
      const browser = await openExperience(service, app.id, 'Register');
      const username = unique('policy');
      const short = await browser.call('post', 'api/experience/verification/new-password-identity', {
        identifier: { type: 'username', value: username },
        password: 'Brisk-Owl9',
      });
      expectError(short, 422, 'password.rejected');
      expect(issueCodes(short.body)).to.include('password_rejected.too_short');
      const issue = short.body.data.issues.find(
        (entry: { code: string }) => entry.code === 'password_rejected.too_short',
      );
      expect(issue.interpolation).to.deep.equal({ min: 12 });

      const accepted = await browser.call('post', 'api/experience/verification/new-password-identity', {
        identifier: { type: 'username', value: username },
        password: 'Brisk-Owl9-Go',
      });
      expectStatus(accepted, 200);
      expectStatus(await identify(browser, { verificationId: accepted.body.verificationId }), 201);
    });

    it('management API: POST /api/users and PATCH /api/users/:id/password refuse a 10-character password', async () => {
      const refused = await service.api.post('users', {
        json: { username: unique('policy'), password: 'Brisk-Owl9' },
      });
      expectError(refused, 422, 'password.rejected');
      expect(issueCodes(refused.body)).to.include('password_rejected.too_short');

      const user = await createUser(service, { username: unique('policy'), password: 'Brisk-Owl9-Go' });
      const change = await service.api.patch(`users/${user.id}/password`, { json: { password: 'Quick-Elk7' } });
      expectError(change, 422, 'password.rejected');
      expect(issueCodes(change.body)).to.include('password_rejected.too_short');
    });

    it('password reset: the new password must meet the policy', async () => {
      const email = newEmail('policy');
      await createUser(service, { primaryEmail: email, password: 'Brisk-Owl9-Go' });
      const browser = await openExperience(service, app.id, 'ForgotPassword');
      const verificationId = await verifyEmail(service, browser, email, 'ForgotPassword');
      expectStatus(await identify(browser, { verificationId }), 204);
      const short = await browser.call('put', 'api/experience/profile/password', { password: 'Quick-Elk7' });
      expectError(short, 422, 'password.rejected');
      expect(issueCodes(short.body)).to.include('password_rejected.too_short');
    });

    it('a relaxed policy takes effect at once', async () => {
      expectStatus(
        await service.api.patch('sign-in-exp', { json: { passwordPolicy: { length: { min: 8, max: 256 } } } }),
        200,
      );
      const created = await service.api.post('users', {
        json: { username: unique('policy'), password: 'Brisk-Owl9' },
      });
      expectStatus(created, 200);
    });
  });

  it('rejects passwords made of the words of the policy (all but three characters or fewer, as Logto)', async () => {
    expectStatus(
      await service.api.patch('sign-in-exp', {
        json: { passwordPolicy: { rejects: { ...defaults!.passwordPolicy.rejects, words: ['tulip', 'sturdy'] } } },
      }),
      200,
    );
    const refused = await service.api.post('users', {
      json: { username: unique('words'), password: 'Sturdy-TULIP7' },
    });
    expectError(refused, 422, 'password.rejected');
    expect(issueCodes(refused.body)).to.deep.equal(['password_rejected.restricted.words']);
    const accepted = await service.api.post('users', {
      json: { username: unique('words'), password: 'Sturdy-TULIP-in-7' },
    });
    expectStatus(accepted, 200);
  });

  describe('sign-in mode and reset methods (Logto parity)', () => {
    it('signInMode SignIn forbids registering, Register forbids signing in: 403 auth.forbidden', async () => {
      expectStatus(await service.api.patch('sign-in-exp', { json: { signInMode: 'SignIn' } }), 200);
      const browser = await openExperience(service, app.id, null);
      expectError(await browser.call('put', 'api/experience', { interactionEvent: 'Register' }), 403, 'auth.forbidden');
      expectStatus(await browser.call('put', 'api/experience', { interactionEvent: 'SignIn' }), 204);
      expectError(
        await browser.call('put', 'api/experience/interaction-event', { interactionEvent: 'Register' }),
        403,
        'auth.forbidden',
      );

      expectStatus(await service.api.patch('sign-in-exp', { json: { signInMode: 'Register' } }), 200);
      const other = await openExperience(service, app.id, null);
      expectError(await other.call('put', 'api/experience', { interactionEvent: 'SignIn' }), 403, 'auth.forbidden');
      expectStatus(await other.call('put', 'api/experience', { interactionEvent: 'Register' }), 204);
      // A password reset is always allowed.
      expectStatus(await other.call('put', 'api/experience', { interactionEvent: 'ForgotPassword' }), 204);
    });

    it('refuses a reset by email code when forgotPasswordMethods leaves it out: 422 session.not_supported_for_forgot_password', async () => {
      const email = newEmail('noreset');
      await createUser(service, { primaryEmail: email, password: 'Brisk-Owl9-Go' });
      expectStatus(await service.api.patch('sign-in-exp', { json: { forgotPasswordMethods: [] } }), 200);
      const browser = await openExperience(service, app.id, 'ForgotPassword');
      const verificationId = await verifyEmail(service, browser, email, 'ForgotPassword');
      expectError(await identify(browser, { verificationId }), 422, 'session.not_supported_for_forgot_password');
    });
  });

  describe('sign-in methods', () => {
    it('refuses password sign-in by email when email sign-in is disabled: 422 user.sign_in_method_not_enabled', async () => {
      const username = unique('methods');
      const email = newEmail('methods');
      await createUser(service, { username, primaryEmail: email, password: 'Brisk-Owl9-Go' });
      expectStatus(await signInWithPassword(service, app.id, { type: 'email', value: email }, 'Brisk-Owl9-Go'), 200);

      const patched = await service.api.patch('sign-in-exp', {
        json: {
          signIn: {
            methods: [{ identifier: 'username', password: true, verificationCode: false, isPasswordPrimary: true }],
          },
        },
      });
      expectStatus(patched, 200);
      const browser = await openExperience(service, app.id);
      expectError(
        await passwordVerification(browser, { type: 'email', value: email }, 'Brisk-Owl9-Go'),
        422,
        'user.sign_in_method_not_enabled',
      );
      // The same for an address without an account, and for a wrong password: nothing is learnt.
      expectError(
        await passwordVerification(browser, { type: 'email', value: newEmail('nobody') }, 'Brisk-Owl9-Go'),
        422,
        'user.sign_in_method_not_enabled',
      );
      expectError(
        await passwordVerification(browser, { type: 'email', value: email }, 'wrong'),
        422,
        'user.sign_in_method_not_enabled',
      );
      expectStatus(await passwordVerification(browser, { type: 'username', value: username }, 'Brisk-Owl9-Go'), 200);
    });

    it('refuses email + password when email signs in by code only, and phone + password by default', async () => {
      const email = newEmail('coded');
      await createUser(service, { primaryEmail: email, password: 'Brisk-Owl9-Go' });
      const browser = await openExperience(service, app.id);
      expectError(
        await passwordVerification(browser, { type: 'phone', value: '15550001234' }, 'Brisk-Owl9-Go'),
        422,
        'user.sign_in_method_not_enabled',
      );

      const patched = await service.api.patch('sign-in-exp', {
        json: {
          signIn: {
            methods: [
              { identifier: 'username', password: true, verificationCode: false, isPasswordPrimary: true },
              { identifier: 'email', password: false, verificationCode: true, isPasswordPrimary: false },
            ],
          },
        },
      });
      expectStatus(patched, 200);
      expectError(
        await passwordVerification(browser, { type: 'email', value: email }, 'Brisk-Owl9-Go'),
        422,
        'user.sign_in_method_not_enabled',
      );
    });

    it('refuses signing in by email code when email signs in by password only', async () => {
      const email = newEmail('nocode');
      await createUser(service, { primaryEmail: email, password: 'Brisk-Owl9-Go' });
      const patched = await service.api.patch('sign-in-exp', {
        json: {
          signIn: {
            methods: [
              { identifier: 'username', password: true, verificationCode: false, isPasswordPrimary: true },
              { identifier: 'email', password: true, verificationCode: false, isPasswordPrimary: true },
            ],
          },
        },
      });
      expectStatus(patched, 200);
      const browser = await openExperience(service, app.id);
      // Logto refuses at identification (the code itself may still be sent and verified).
      const sent = await browser.call('post', 'api/experience/verification/verification-code', {
        identifier: { type: 'email', value: email },
        interactionEvent: 'SignIn',
      });
      if (sent.statusCode !== 200) {
        expectError(sent, 422, 'user.sign_in_method_not_enabled');
        return;
      }
      const verificationId = await verifyEmail(service, browser, email, 'SignIn');
      expectError(await identify(browser, { verificationId }), 422, 'user.sign_in_method_not_enabled');
    });
  });
});
