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
import { HookEvents } from '../support/hook-events.ts';
import type { TestService } from '../support/service.ts';
import { totp } from '../support/totp.ts';
import { ifSet, unique } from '../support/values.ts';

/**
 * Second factors in the sign-in flow (EXPERIENCE-API.md, sequence 5): TOTP enrolment and proof with
 * codes computed here by an independent implementation (otplib), backup codes, the MFA policy, and
 * lockout of the second factor apart from the password.
 */

const password = 'Granite-Kestrel-64';
type Policy = 'UserControlled' | 'Mandatory' | 'NoPrompt';

/** The TOTP code of `secret` `steps` periods of 30 s from now (RFC 6238: SHA-1, 6 digits, 30 s). */

describe('MFA in the Experience API', () => {
  let setting: SignInSetting;
  let service: TestService;
  let events: HookEvents;
  let spa: { id: string };

  before(async () => {
    setting = await startSignInSetting();
    ({ service, events, spa } = setting);
  });
  after(() => ifSet(setting)?.stop());

  async function setMfa(policy: Policy, factors: string[] = ['Totp', 'BackupCode']): Promise<void> {
    expectStatus(await service.api.patch('sign-in-exp', { json: { mfa: { factors, policy } } }), 200);
  }

  async function newUser(): Promise<{ id: string; username: string }> {
    const username = unique('mfa');
    const user = await createUser(service, { username, password });
    return { id: user.id, username };
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

  /** Enrols an authenticator (and backup codes) in `browser`, up to but not including submit. */
  async function enrol(browser: Browser): Promise<{ secret: string; code: string; codes: string[] }> {
    const started = await browser.call('post', 'api/experience/verification/totp/secret');
    expectStatus(started, 200);
    const { secret, verificationId } = started.body;
    const code = await totp(secret);
    expectStatus(await browser.call('post', 'api/experience/verification/totp/verify', { code, verificationId }), 200);
    expectStatus(await browser.call('post', 'api/experience/profile/mfa', { type: 'Totp', verificationId }), 204);
    const backup = await browser.call('post', 'api/experience/verification/backup-code/generate');
    expectStatus(backup, 200);
    expectStatus(
      await browser.call('post', 'api/experience/profile/mfa', {
        type: 'BackupCode',
        verificationId: backup.body.verificationId,
      }),
      204,
    );
    return { secret, code, codes: backup.body.codes };
  }

  /** A user with an authenticator and backup codes bound through the flow. */
  async function userWithTotp(): Promise<{
    id: string;
    username: string;
    secret: string;
    code: string;
    codes: string[];
  }> {
    await setMfa('UserControlled');
    const user = await newUser();
    const browser = await identified(user.username);
    const enrolled = await enrol(browser);
    await submitToApplication(browser);
    return { ...user, ...enrolled };
  }

  describe('enrolment at sign-in (the policy suggests or requires a factor)', () => {
    it('binds TOTP and backup codes at submit, with one User.Data.Updated; the factors show to admins without secrets', async () => {
      await setMfa('UserControlled');
      const user = await newUser();
      const browser = await identified(user.username);

      // No factor yet: Logto's skippable suggestion.
      const owed = await submit(browser);
      expectError(owed, 422, 'user.suggest_mfa');
      expect(owed.body.data).to.deep.equal({ availableFactors: ['Totp'], skippable: true });

      const started = await browser.call('post', 'api/experience/verification/totp/secret');
      expectStatus(started, 200);
      expect(started.body).to.have.keys('verificationId', 'secret', 'secretQrCode');
      expect(started.body.secret).to.match(/^[A-Z2-7]{32}$/);
      expect(started.body.secretQrCode).to.match(/^data:image\/png;base64,[A-Za-z0-9+/]+=*$/);
      const { secret, verificationId } = started.body;

      const wrong = await browser.call('post', 'api/experience/verification/totp/verify', {
        code: '000000',
        verificationId,
      });
      expectError(wrong, 400, 'session.mfa.invalid_totp_code');
      // Not proven yet: it cannot be bound.
      expectError(
        await browser.call('post', 'api/experience/profile/mfa', { type: 'Totp', verificationId }),
        400,
        'session.verification_failed',
      );

      const verified = await browser.call('post', 'api/experience/verification/totp/verify', {
        code: await totp(secret),
        verificationId,
      });
      expectStatus(verified, 200);
      expect(verified.body).to.deep.equal({ verificationId });
      expectStatus(await browser.call('post', 'api/experience/profile/mfa', { type: 'Totp', verificationId }), 204);

      // Backup codes are enabled: an authenticator alone is not enough.
      expectError(await submit(browser), 422, 'session.mfa.backup_code_required');
      const backup = await browser.call('post', 'api/experience/verification/backup-code/generate');
      expectStatus(backup, 200);
      expect(backup.body.codes).to.have.length(10);
      for (const code of backup.body.codes) {
        expect(code).to.match(/^[0-9a-f]{10}$/);
      }
      expect(new Set(backup.body.codes).size).to.equal(10);
      expectStatus(
        await browser.call('post', 'api/experience/profile/mfa', {
          type: 'BackupCode',
          verificationId: backup.body.verificationId,
        }),
        204,
      );

      // Nothing is bound before submit.
      expect((await service.api.get(`users/${user.id}/mfa-verifications`)).body).to.deep.equal([]);

      const { payloads } = await events.expect(['User.Data.Updated', 'PostSignIn'], () => submitToApplication(browser));
      const updated = payloads['User.Data.Updated'][0];
      expect(updated.data.id).to.equal(user.id);
      expect(updated).to.include({ path: '/api/experience/submit', method: 'POST' });
      expect(payloads.PostSignIn[0]).to.include({ userId: user.id, interactionEvent: 'SignIn' });

      const factors = await service.api.get(`users/${user.id}/mfa-verifications`);
      expectStatus(factors, 200);
      expect(factors.body.map((factor: { type: string }) => factor.type).sort()).to.deep.equal(['BackupCode', 'Totp']);
      for (const factor of factors.body) {
        expect(Object.keys(factor)).to.not.include.members(['secret', 'codes']);
        expect(JSON.stringify(factor)).to.not.include(secret);
        expect(new Date(factor.createdAt).toISOString()).to.equal(factor.createdAt);
      }
      expect(factors.body.find((factor: { type: string }) => factor.type === 'BackupCode').remainCodes).to.equal(10);
    });

    it('registration under a Mandatory policy: not skippable; bound at submit (User.Created at identification, then User.Data.Updated + PostRegister)', async () => {
      await setMfa('Mandatory');
      try {
        const browser = await openExperience(service, spa.id, 'Register');
        const username = unique('mfa_reg');
        const identity = await browser.call('post', 'api/experience/verification/new-password-identity', {
          identifier: { type: 'username', value: username },
          password,
        });
        expectStatus(identity, 200);
        const { payloads: created } = await events.expect(['User.Created'], () =>
          identify(browser, { verificationId: identity.body.verificationId }),
        );
        const userId = created['User.Created'][0].data.id;

        const owed = await submit(browser);
        expectError(owed, 422, 'user.missing_mfa');
        expect(owed.body.data).to.deep.equal({ availableFactors: ['Totp'] });
        expectError(
          await browser.call('post', 'api/experience/profile/mfa/mfa-skipped'),
          422,
          'session.mfa.mfa_policy_not_user_controlled',
        );

        await enrol(browser);
        const { payloads } = await events.expect(['User.Data.Updated', 'PostRegister'], () =>
          submitToApplication(browser),
        );
        expect(payloads['User.Data.Updated'][0].data.id).to.equal(userId);
        expect(payloads.PostRegister[0]).to.include({ userId, interactionEvent: 'Register' });
        expect((await service.api.get(`users/${userId}/mfa-verifications`)).body).to.have.length(2);
      } finally {
        await setMfa('UserControlled');
      }
    });

    it('UserControlled: the user may decline once and is not asked again; NoPrompt never asks', async () => {
      await setMfa('UserControlled');
      const user = await newUser();
      const browser = await identified(user.username);
      expectError(await submit(browser), 422, 'user.suggest_mfa');
      expectStatus(await browser.call('post', 'api/experience/profile/mfa/mfa-skipped'), 204);
      // Declining is no linking: no User.Data.Updated.
      await events.expect(['PostSignIn'], () => submitToApplication(browser));
      await submitToApplication(await identified(user.username));

      await setMfa('NoPrompt');
      try {
        await submitToApplication(await identified((await newUser()).username));
      } finally {
        await setMfa('UserControlled');
      }
    });

    it('an organization with isMfaRequired asks its members even when the policy does not', async () => {
      await setMfa('NoPrompt');
      try {
        const user = await newUser();
        const organization = await service.api.post('organizations', {
          json: { name: `mfa-org-${Date.now()}`, isMfaRequired: true },
        });
        expect(organization.statusCode, JSON.stringify(organization.body)).to.be.oneOf([200, 201]);
        expectStatus(
          await service.api.post(`organizations/${organization.body.id}/users`, { json: { userIds: [user.id] } }),
          201,
        );
        const owed = await submit(await identified(user.username));
        expectError(owed, 422, 'user.missing_mfa');
        expect(owed.body.data).to.deep.equal({ availableFactors: ['Totp'] });
      } finally {
        await setMfa('UserControlled');
      }
    });

    it('MFA is off while no factor besides backup codes is enabled', async () => {
      await setMfa('Mandatory', ['BackupCode']);
      try {
        await submitToApplication(await identified((await newUser()).username));
      } finally {
        await setMfa('UserControlled');
      }
    });
  });

  describe('verification at sign-in (the user has a factor: session.mfa.require_mfa_verification)', () => {
    it('asks for the second factor and accepts a TOTP code computed from the secret; a code is never accepted twice', async () => {
      const user = await userWithTotp();
      const browser = await identified(user.username);
      const owed = await submit(browser);
      expectError(owed, 403, 'session.mfa.require_mfa_verification');
      expect([...owed.body.data.availableFactors].sort()).to.deep.equal(['BackupCode', 'Totp']);

      // The code that enrolled the authenticator was used: replaying it is refused.
      expectError(
        await browser.call('post', 'api/experience/verification/totp/verify', { code: user.code }),
        400,
        'session.mfa.invalid_totp_code',
      );
      // The next period's code (within the one-step drift allowed) is fresh.
      const next = await totp(user.secret, 1);
      const verified = await browser.call('post', 'api/experience/verification/totp/verify', { code: next });
      expectStatus(verified, 200);
      expect(verified.body.verificationId).to.be.a('string');
      await events.expect(['PostSignIn'], () => submitToApplication(browser));

      // The same code in another sign-in: refused (replay), and the sign-in cannot finish.
      const again = await identified(user.username);
      expectError(
        await again.call('post', 'api/experience/verification/totp/verify', { code: next }),
        400,
        'session.mfa.invalid_totp_code',
      );
      expectError(await submit(again), 403, 'session.mfa.require_mfa_verification');
      const factors = (await service.api.get(`users/${user.id}/mfa-verifications`)).body as Array<{
        type: string;
        lastUsedAt?: string;
      }>;
      expect(factors.find((factor) => factor.type === 'Totp')!.lastUsedAt).to.be.a('string');
    });

    it('a backup code proves the second factor once', async () => {
      const user = await userWithTotp();
      const browser = await identified(user.username);
      expectError(await submit(browser), 403, 'session.mfa.require_mfa_verification');
      expectError(
        await browser.call('post', 'api/experience/verification/backup-code/verify', { code: 'ffffffffff' }),
        400,
        'session.mfa.invalid_backup_code',
      );
      expectStatus(
        await browser.call('post', 'api/experience/verification/backup-code/verify', { code: user.codes[0] }),
        200,
      );
      await submitToApplication(browser);

      const again = await identified(user.username);
      expectError(
        await again.call('post', 'api/experience/verification/backup-code/verify', { code: user.codes[0] }),
        400,
        'session.mfa.invalid_backup_code',
      );
      expectStatus(
        await again.call('post', 'api/experience/verification/backup-code/verify', {
          code: user.codes[1].toUpperCase(),
        }),
        200,
      );
      await submitToApplication(again);

      const factors = (await service.api.get(`users/${user.id}/mfa-verifications`)).body as Array<{
        type: string;
        remainCodes?: number;
      }>;
      expect(factors.find((factor) => factor.type === 'BackupCode')!.remainCodes).to.equal(8);
    });

    it('refuses bad input with 4xx error codes', async () => {
      const user = await userWithTotp();
      const anonymous = await openExperience(service, spa.id);
      expectError(
        await anonymous.call('post', 'api/experience/verification/totp/secret'),
        404,
        'session.identifier_not_found',
      );
      expectError(
        await anonymous.call('post', 'api/experience/verification/totp/verify', { code: '123456' }),
        404,
        'session.identifier_not_found',
      );

      const browser = await identified(user.username);
      expectError(
        await browser.call('post', 'api/experience/verification/totp/verify', { code: 123456 }),
        400,
        'guard.invalid_input',
      );
      expectError(
        await browser.call('post', 'api/experience/verification/totp/verify', {}),
        400,
        'guard.invalid_input',
      );
      expectError(
        await browser.call('post', 'api/experience/verification/totp/verify', { code: 'abcdef' }),
        400,
        'session.mfa.invalid_totp_code',
      );
      // A new secret is made (Logto's), but binding waits for the second factor, then refuses a second app.
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
      const bind = { type: 'Totp', verificationId };
      expectError(
        await browser.call('post', 'api/experience/profile/mfa', bind),
        403,
        'session.mfa.require_mfa_verification',
      );
      expectError(
        await browser.call('post', 'api/experience/profile/mfa', { type: 'WebAuthn', verificationId: 'nope' }),
        403,
        'session.mfa.require_mfa_verification',
      );
      expectStatus(
        await browser.call('post', 'api/experience/verification/totp/verify', { code: await totp(user.secret, 1) }),
        200,
      );
      expectError(await browser.call('post', 'api/experience/profile/mfa', bind), 422, 'user.totp_already_in_use');
      expectError(
        await browser.call('post', 'api/experience/profile/mfa', { type: 'WebAuthn', verificationId: 'nope' }),
        404,
        'session.verification_session_not_found',
      );
      // A record of another kind is not found as this factor's (Logto's 404).
      expectError(
        await browser.call('post', 'api/experience/profile/mfa', { type: 'BackupCode', verificationId }),
        404,
        'session.verification_session_not_found',
      );
      expectError(
        await browser.call('post', 'api/experience/profile/mfa', { type: 'Sms', verificationId: 'nope' }),
        400,
        'guard.invalid_input',
      );

      await setMfa('UserControlled', ['WebAuthn']);
      try {
        expectError(
          await browser.call('post', 'api/experience/profile/mfa', bind),
          400,
          'session.mfa.mfa_factor_not_enabled',
        );
      } finally {
        await setMfa('UserControlled');
      }
    });
  });

  // Pending the fix in lib/experience/routes.ts (identification keeps `state.mfa` when the user
  // changes): today the second identification inherits the first user's proven factor.
  it('a factor proven for one user does not carry over when the interaction re-identifies another', async () => {
    const own = await userWithTotp();
    const other = await userWithTotp();
    const browser = await identified(own.username);
    expectStatus(
      await browser.call('post', 'api/experience/verification/totp/verify', { code: await totp(own.secret, 1) }),
      200,
    );
    const verification = await passwordVerification(browser, { type: 'username', value: other.username }, password);
    expectStatus(verification, 200);
    expectStatus(await identify(browser, { verificationId: verification.body.verificationId }), 204);
    expectError(await submit(browser), 403, 'session.mfa.require_mfa_verification');
  });

  describe('lockout of the second factor', () => {
    before(async () => {
      expectStatus(
        await service.api.patch('sign-in-exp', { json: { sentinelPolicy: { maxAttempts: 3, lockoutDuration: 5 } } }),
        200,
      );
    });
    after(async () => {
      expectStatus(
        await service.api.patch('sign-in-exp', { json: { sentinelPolicy: { maxAttempts: 10, lockoutDuration: 60 } } }),
        200,
      );
    });

    it('wrong TOTP codes lock the second factor (Identifier.Lockout {type: userId}) but not the password', async () => {
      const user = await userWithTotp();
      const browser = await identified(user.username);
      const wrong = async () =>
        browser.call('post', 'api/experience/verification/totp/verify', {
          code: String((Number(await totp(user.secret)) + 1) % 1e6).padStart(6, '0'),
        });
      expectError(await wrong(), 400, 'session.mfa.invalid_totp_code');
      expectError(await wrong(), 400, 'session.mfa.invalid_totp_code');
      const { payloads, result } = await events.expect(['Identifier.Lockout'], wrong);
      expectError(result, 400, 'session.verification_blocked_too_many_attempts');
      expect(payloads['Identifier.Lockout'][0]).to.include({ type: 'userId', value: user.id });

      // Locked: even a right code is refused, and no second Lockout event.
      const { result: right } = await events.expect([], async () =>
        browser.call('post', 'api/experience/verification/totp/verify', { code: await totp(user.secret, 1) }),
      );
      expectError(right, 400, 'session.verification_blocked_too_many_attempts');
      expectError(
        await browser.call('post', 'api/experience/verification/backup-code/verify', { code: user.codes[0] }),
        400,
        'session.verification_blocked_too_many_attempts',
      );
      expectError(await submit(browser), 403, 'session.mfa.require_mfa_verification');

      // The password was not what failed: it still verifies.
      const other = await openExperience(service, spa.id);
      expectStatus(await passwordVerification(other, { type: 'username', value: user.username }, password), 200);

      // An admin unlocks the second factor by the user's id.
      expectStatus(await service.api.post('sentinel-activities/delete', { json: { targets: [user.id] } }), 204);
      expectStatus(
        await browser.call('post', 'api/experience/verification/totp/verify', { code: await totp(user.secret, 1) }),
        200,
      );
    });

    it('password failures and second-factor failures are counted apart', async () => {
      const user = await userWithTotp();
      const browser = await identified(user.username);
      for (let attempt = 0; attempt < 2; attempt++) {
        expectError(
          await browser.call('post', 'api/experience/verification/totp/verify', { code: 'x00000' }),
          400,
          'session.mfa.invalid_totp_code',
        );
      }
      // Two second-factor failures and two password failures: under the limit of three for each.
      const other = await openExperience(service, spa.id);
      expectError(
        await passwordVerification(other, { type: 'username', value: user.username }, 'Wrong-Password-11'),
        422,
        'session.invalid_credentials',
      );
      expectError(
        await passwordVerification(other, { type: 'username', value: user.username }, 'Wrong-Password-12'),
        422,
        'session.invalid_credentials',
      );
      // A success ends the run: the second factor's count starts again.
      expectStatus(
        await browser.call('post', 'api/experience/verification/totp/verify', { code: await totp(user.secret, 1) }),
        200,
      );
      await submitToApplication(browser);
      const third = await identified(user.username);
      expectError(
        await third.call('post', 'api/experience/verification/totp/verify', { code: 'x00000' }),
        400,
        'session.mfa.invalid_totp_code',
      );
      expectError(
        await third.call('post', 'api/experience/verification/totp/verify', { code: 'x00000' }),
        400,
        'session.mfa.invalid_totp_code',
      );
    });
  });
});
