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
import type { TestService } from '../support/service.ts';
import { totp } from '../support/totp.ts';
import { ifSet, unique } from '../support/values.ts';

const password = 'Granite-Kestrel-64';
type Factor = { id: string; type: string; remainCodes?: number };

/**
 * Second factors an administrator creates (Logto's `POST /api/users/:userId/mfa-verifications`),
 * and the skips of a user's `logto-configs`.
 */
describe('management API: a user’s MFA factors created by an administrator, and logto-configs', () => {
  let setting: SignInSetting;
  let service: TestService;
  let spa: { id: string };

  before(async () => {
    setting = await startSignInSetting();
    ({ service, spa } = setting);
    expectStatus(
      await service.api.patch('sign-in-exp', {
        json: { mfa: { factors: ['Totp', 'BackupCode'], policy: 'UserControlled' } },
      }),
      200,
    );
  });
  after(() => ifSet(setting)?.stop());

  const newUser = async () => {
    const username = unique('admin_mfa');
    return { ...(await createUser(service, { username, password })), username };
  };
  const create = (userId: string, json: Record<string, unknown>) =>
    service.api.post(`users/${userId}/mfa-verifications`, { json });
  const factorsOf = async (userId: string) =>
    (await service.api.get<Factor[]>(`users/${userId}/mfa-verifications`)).body;

  async function identified(username: string): Promise<Browser> {
    const browser = await openExperience(service, spa.id);
    const verification = await passwordVerification(browser, { type: 'username', value: username }, password);
    expectStatus(verification, 200);
    expectStatus(await identify(browser, { verificationId: verification.body.verificationId }), 204);
    return browser;
  }

  it('creates a TOTP secret (with its QR code) the user then signs in with', async () => {
    const user = await newUser();
    const created = await create(user.id, { type: 'Totp' });
    expectStatus(created, 200);
    expect(created.body.type).to.equal('Totp');
    expect(created.body.secret).to.match(/^[A-Z2-7]{16,}$/);
    expect(created.body.secretQrCode).to.match(/^data:image\/png;base64,/);
    expect((await factorsOf(user.id)).map(({ type }) => type)).to.deep.equal(['Totp']);
    expectError(await create(user.id, { type: 'Totp' }), 422, 'user.totp_already_in_use');

    const browser = await identified(user.username);
    expectError(await browser.call('post', 'api/experience/submit'), 403, 'session.mfa.require_mfa_verification');
    const code = await totp(created.body.secret);
    expectStatus(await browser.call('post', 'api/experience/verification/totp/verify', { code }), 200);
    await submitToApplication(browser);
  });

  it('takes a given TOTP secret and refuses one that is not base32', async () => {
    const user = await newUser();
    expectError(await create(user.id, { type: 'Totp', secret: 'not a secret!' }), 422, 'user.totp_secret_invalid');
    const secret = 'JBSWY3DPEHPK3PXPJBSWY3DP';
    const created = await create(user.id, { type: 'Totp', secret });
    expectStatus(created, 200);
    expect(created.body.secret).to.equal(secret);
  });

  it('creates backup codes only beside another factor, in Logto’s format, and they sign the user in once each', async () => {
    const user = await newUser();
    expectError(await create(user.id, { type: 'BackupCode' }), 422, 'session.mfa.backup_code_can_not_be_alone');
    expectStatus(await create(user.id, { type: 'Totp' }), 200);
    expectError(await create(user.id, { type: 'BackupCode', codes: ['abc'] }), 422, 'user.wrong_backup_code_format');

    const created = await create(user.id, { type: 'BackupCode' });
    expectStatus(created, 200);
    expect(created.body.type).to.equal('BackupCode');
    expect(created.body.codes).to.have.length(10);
    const factors = await factorsOf(user.id);
    expect(factors.map(({ type }) => type).sort()).to.deep.equal(['BackupCode', 'Totp']);
    expect(factors.find(({ type }) => type === 'BackupCode')!.remainCodes).to.equal(10);
    expectError(await create(user.id, { type: 'BackupCode' }), 422, 'user.backup_code_already_in_use');

    const browser = await identified(user.username);
    expectError(await browser.call('post', 'api/experience/submit'), 403, 'session.mfa.require_mfa_verification');
    const [code] = created.body.codes as string[];
    expectStatus(await browser.call('post', 'api/experience/verification/backup-code/verify', { code }), 200);
    await submitToApplication(browser);

    const other = await newUser();
    expectStatus(await create(other.id, { type: 'Totp' }), 200);
    const given = Array.from({ length: 10 }, (_, index) => `${index}`.repeat(10));
    const withGiven = await create(other.id, { type: 'BackupCode', codes: given });
    expectStatus(withGiven, 200);
    expect(withGiven.body.codes).to.deep.equal(given);
  });

  it('answers 404 for a user that does not exist', async () => {
    expectError(await create('no-such-user', { type: 'Totp' }), 404, 'entity.not_exists_with_id');
  });

  it('reads and sets logto-configs: MFA skipped, MFA skipped at sign-in, passkey sign-in skipped', async () => {
    const user = await newUser();
    const path = `users/${user.id}/logto-configs`;
    const initial = await service.api.get(path);
    expectStatus(initial, 200);
    expect(initial.body).to.deep.equal({
      mfa: { skipped: false, skipMfaOnSignIn: false },
      passkeySignIn: { skipped: false },
    });
    const set = await service.api.patch(path, {
      json: { mfa: { skipped: false, skipMfaOnSignIn: true }, passkeySignIn: { skipped: true } },
    });
    expectStatus(set, 200);
    expect(set.body).to.deep.equal({
      mfa: { skipped: false, skipMfaOnSignIn: true },
      passkeySignIn: { skipped: true },
    });
    // What a PATCH leaves out is kept.
    const partial = await service.api.patch(path, { json: { mfa: { skipped: true } } });
    expect(partial.body).to.deep.equal({
      mfa: { skipped: true, skipMfaOnSignIn: true },
      passkeySignIn: { skipped: true },
    });
    expect((await service.api.get(path)).body).to.deep.equal(partial.body);
    expectError(await service.api.get('users/no-such-user/logto-configs'), 404, 'entity.not_exists_with_id');
  });
});
