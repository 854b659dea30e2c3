import { expect } from 'chai';

import { Browser } from '../experience/browser.ts';
import { createUser, redirectUri, type SignInSetting, startSignInSetting } from '../experience/experience-helpers.ts';
import { accountApi } from '../support/account-api.ts';
import { expectError, expectStatus } from '../support/expect.ts';
import { HookEvents } from '../support/hook-events.ts';
import { logtoManagementClient, type TestService } from '../support/service.ts';
import { SoftwareAuthenticator } from '../support/software-authenticator.ts';
import { totp } from '../support/totp.ts';
import { ifSet, unique } from '../support/values.ts';

/**
 * Second factors managed by the user (Account API: binding needs a fresh identity proof and is a
 * `User.Data.Updated`) and by admins (`/api/users/:userId/mfa-verifications`).
 */

const password = 'Granite-Kestrel-64';

describe('MFA in the Account API and the management API', () => {
  let setting: SignInSetting;
  let service: TestService;
  let events: HookEvents;
  let spa: { id: string };

  before(async () => {
    setting = await startSignInSetting();
    ({ service, events, spa } = setting);
  });
  after(() => ifSet(setting)?.stop());

  /** A new user, signed in through the real flow: their id and opaque access token (scope openid). */
  async function signedInUser(): Promise<{ id: string; token: string }> {
    const username = unique('acct');
    const user = await createUser(service, { username, password });
    const browser = new Browser(service);
    const { verifier } = await browser.authorize(spa.id, redirectUri);
    expectStatus(await browser.call('put', 'api/experience', { interactionEvent: 'SignIn' }), 204);
    const verification = await browser.call('post', 'api/experience/verification/password', {
      identifier: { type: 'username', value: username },
      password,
    });
    expectStatus(
      await browser.call('post', 'api/experience/identification', { verificationId: verification.body.verificationId }),
      204,
    );
    const submitted = await browser.call('post', 'api/experience/submit');
    expectStatus(submitted, 200);
    const landed = await browser.followToApplication(submitted.body.redirectTo);
    const tokens = await service.http.post('oidc/token', {
      form: {
        grant_type: 'authorization_code',
        code: landed.searchParams.get('code')!,
        code_verifier: verifier,
        client_id: spa.id,
        redirect_uri: redirectUri,
      },
    });
    expectStatus(tokens, 200);
    return { id: user.id, token: tokens.body.access_token };
  }

  const account = (token: string) => {
    const call = accountApi(service, token);
    return {
      call,
      async proof(): Promise<string> {
        const response = await call('post', 'verifications/password', { password });
        expectStatus(response, 201);
        return String(response.body.verificationRecordId);
      },
    };
  };

  it('the user registers passkeys (Logto: /verifications/web-authn/registration, then bind with a proof), names, lists and removes them', async () => {
    const user = await signedInUser();
    const me = account(user.token);
    const authenticator = new SoftwareAuthenticator(service.url);

    async function registered(): Promise<string> {
      const started = await me.call('post', 'verifications/web-authn/registration');
      expectStatus(started, 200);
      expect(started.body).to.have.keys('verificationRecordId', 'registrationOptions', 'expiresAt');
      expect(started.body.registrationOptions.rp.id).to.equal('127.0.0.1');
      const verified = await me.call('post', 'verifications/web-authn/registration/verify', {
        verificationRecordId: started.body.verificationRecordId,
        payload: authenticator.register(started.body.registrationOptions),
      });
      expectStatus(verified, 200);
      return started.body.verificationRecordId;
    }

    // A registration answered for another origin does not verify.
    const started = await me.call('post', 'verifications/web-authn/registration');
    expectError(
      await me.call('post', 'verifications/web-authn/registration/verify', {
        verificationRecordId: started.body.verificationRecordId,
        payload: new SoftwareAuthenticator('https://evil.example').register(started.body.registrationOptions),
      }),
      400,
      'session.mfa.webauthn_verification_failed',
    );
    // Not verified: it cannot be bound.
    const unverified = { type: 'WebAuthn', newIdentifierVerificationRecordId: started.body.verificationRecordId };
    expectError(
      await me.call('post', 'my-account/mfa-verifications', unverified, await me.proof()),
      404,
      'verification_record.not_found',
    );

    const first = await registered();
    const bind = { type: 'WebAuthn', newIdentifierVerificationRecordId: first, name: 'Laptop' };
    expectError(
      await me.call('post', 'my-account/mfa-verifications', bind),
      401,
      'verification_record.permission_denied',
    );
    const proof = await me.proof();
    const bound = await events.expect(['User.Data.Updated'], () =>
      me.call('post', 'my-account/mfa-verifications', bind, proof),
    );
    expect(bound.result.statusCode, JSON.stringify(bound.result.body)).to.equal(204);
    expect(bound.payloads['User.Data.Updated'][0].data.id).to.equal(user.id);
    // The registration is used up with the proof.
    expectError(
      await me.call('post', 'my-account/mfa-verifications', bind, await me.proof()),
      404,
      'verification_record.not_found',
    );

    // A second passkey: a user may hold several.
    const second = await registered();
    expectStatus(
      await me.call(
        'post',
        'my-account/mfa-verifications',
        { type: 'WebAuthn', newIdentifierVerificationRecordId: second },
        await me.proof(),
      ),
      204,
    );
    const listed = await me.call('get', 'my-account/mfa-verifications');
    const names = listed.body.map((factor: { type: string; name?: string }) => `${factor.type}:${factor.name ?? ''}`);
    expect(names).to.have.members(['WebAuthn:Laptop', 'WebAuthn:']);
    const admin = await service.api.get(`users/${user.id}/mfa-verifications`);
    expect(admin.body).to.have.length(2);

    const removal = await me.proof();
    const removed = await events.expect(['User.Data.Updated'], () =>
      me.call('delete', `my-account/mfa-verifications/${listed.body[0].id}`, undefined, removal),
    );
    expect(removed.result.statusCode).to.equal(204);
    expect(removed.payloads['User.Data.Updated'][0].data.id).to.equal(user.id);
    expect((await me.call('get', 'my-account/mfa-verifications')).body).to.have.length(1);
  });

  it('the user binds an authenticator with a fresh identity proof (User.Data.Updated), sees and removes it', async () => {
    const user = await signedInUser();
    const me = account(user.token);
    expect((await me.call('get', 'my-account/mfa-verifications')).body).to.deep.equal([]);

    const generated = await me.call('post', 'my-account/mfa-verifications/totp-secret/generate');
    expectStatus(generated, 200);
    expect(generated.body.secret).to.match(/^[A-Z2-7]{32}$/);
    expect(generated.body.secretQrCode).to.match(/^data:image\/png;base64,/);
    const { secret } = generated.body;

    // Generating changed nothing; binding needs the proof header.
    const bind = { type: 'Totp', secret, code: await totp(secret) };
    expectError(
      await me.call('post', 'my-account/mfa-verifications', bind),
      401,
      'verification_record.permission_denied',
    );
    const proof = await me.proof();
    expectError(
      await me.call('post', 'my-account/mfa-verifications', { ...bind, code: '000000' }, proof),
      400,
      'session.mfa.invalid_totp_code',
    );

    const { result, payloads } = await events.expect(['User.Data.Updated'], () =>
      me.call('post', 'my-account/mfa-verifications', bind, proof),
    );
    expect(result.statusCode, JSON.stringify(result.body)).to.equal(204);
    const updated = payloads['User.Data.Updated'][0];
    expect(updated.data.id).to.equal(user.id);
    expect(updated).to.include({ path: '/api/my-account/mfa-verifications', method: 'POST' });

    // The proof is used up; and one authenticator per account.
    const second = await me.call(
      'post',
      'my-account/mfa-verifications',
      { type: 'Totp', secret, code: await totp(secret, 1) },
      proof,
    );
    expect(second.statusCode).to.be.within(400, 499);
    expectError(
      await me.call(
        'post',
        'my-account/mfa-verifications',
        { type: 'Totp', secret, code: await totp(secret, 1) },
        await me.proof(),
      ),
      422,
      'user.totp_already_in_use',
    );

    const listed = await me.call('get', 'my-account/mfa-verifications');
    expectStatus(listed, 200);
    expect(listed.body).to.have.length(1);
    expect(listed.body[0]).to.include({ type: 'Totp' });
    expect(JSON.stringify(listed.body)).to.not.include(secret);
    const [factor] = listed.body;

    expectError(
      await me.call('delete', `my-account/mfa-verifications/${factor.id}`),
      401,
      'verification_record.permission_denied',
    );
    const removal = await events.expect(['User.Data.Updated'], async () =>
      me.call('delete', `my-account/mfa-verifications/${factor.id}`, undefined, await me.proof()),
    );
    expect(removal.result.statusCode).to.equal(204);
    expect((await me.call('get', 'my-account/mfa-verifications')).body).to.deep.equal([]);
    expectError(
      await me.call('delete', `my-account/mfa-verifications/${factor.id}`, undefined, await me.proof()),
      404,
      'entity.not_exists_with_id',
    );
  });

  it("binds an authenticator by its secret alone, as Logto's account pages do", async () => {
    const user = await signedInUser();
    const me = account(user.token);
    const { secret } = (await me.call('post', 'my-account/mfa-verifications/totp-secret/generate')).body;
    expectStatus(
      await me.call('post', 'my-account/mfa-verifications', { type: 'Totp', secret }, await me.proof()),
      204,
    );
    const factors = (await me.call('get', 'my-account/mfa-verifications')).body as Array<{ id: string; type: string }>;
    expect(factors.map(({ type }) => type)).to.deep.equal(['Totp']);
    // A second one is refused; PUT …/totp replaces it, checking a current code of the new secret.
    const proof = await me.proof();
    expectError(
      await me.call('post', 'my-account/mfa-verifications', { type: 'Totp', secret }, proof),
      422,
      'user.totp_already_in_use',
    );
    const fresh = (await me.call('post', 'my-account/mfa-verifications/totp-secret/generate')).body.secret as string;
    expectError(
      await me.call('put', 'my-account/mfa-verifications/totp', { secret: fresh, code: '000000' }, proof),
      400,
      'session.mfa.invalid_totp_code',
    );
    expectStatus(
      await me.call('put', 'my-account/mfa-verifications/totp', { secret: fresh, code: await totp(fresh) }, proof),
      204,
    );
    const after = (await me.call('get', 'my-account/mfa-verifications')).body as Array<{ id: string; type: string }>;
    expect(after.map(({ type }) => type)).to.deep.equal(['Totp']);
    expect(after[0].id).to.not.equal(factors[0].id);
  });

  it('refuses backup codes as the only factor (session.mfa.backup_code_can_not_be_alone)', async () => {
    const me = account((await signedInUser()).token);
    const { codes } = (await me.call('post', 'my-account/mfa-verifications/backup-codes/generate')).body;
    expectError(
      await me.call('post', 'my-account/mfa-verifications', { type: 'BackupCode', codes }, await me.proof()),
      422,
      'session.mfa.backup_code_can_not_be_alone',
    );
    expect((await me.call('get', 'my-account/mfa-verifications')).body).to.deep.equal([]);
  });

  it('the user binds backup codes (User.Data.Updated); a new set replaces the old one', async () => {
    const user = await signedInUser();
    const me = account(user.token);
    // Backup codes stand in for another factor: an authenticator first.
    const { secret } = (await me.call('post', 'my-account/mfa-verifications/totp-secret/generate')).body;
    expectStatus(
      await me.call('post', 'my-account/mfa-verifications', { type: 'Totp', secret }, await me.proof()),
      204,
    );
    const generated = await me.call('post', 'my-account/mfa-verifications/backup-codes/generate');
    expectStatus(generated, 200);
    expect(generated.body.codes).to.have.length(10);
    await events.expect(['User.Data.Updated'], async () =>
      expect(
        (
          await me.call(
            'post',
            'my-account/mfa-verifications',
            { type: 'BackupCode', codes: generated.body.codes },
            await me.proof(),
          )
        ).statusCode,
      ).to.equal(204),
    );
    const renewed = (await me.call('post', 'my-account/mfa-verifications/backup-codes/generate')).body.codes;
    expect(
      (await me.call('post', 'my-account/mfa-verifications', { type: 'BackupCode', codes: renewed }, await me.proof()))
        .statusCode,
    ).to.equal(204);
    const listed = (await me.call('get', 'my-account/mfa-verifications')).body as Array<{ type: string }>;
    const backupCodes = listed.filter(({ type }) => type === 'BackupCode');
    expect(backupCodes).to.have.length(1);
    expect(backupCodes[0]).to.include({ type: 'BackupCode', remainCodes: 10 });

    expectError(
      await me.call('post', 'my-account/mfa-verifications', { type: 'BackupCode', codes: ['short'] }, await me.proof()),
      400,
      'guard.invalid_input',
    );
    expectError(
      await me.call(
        'post',
        'my-account/mfa-verifications',
        { type: 'Totp', secret: 'not base32!', code: '123456' },
        await me.proof(),
      ),
      400,
      'guard.invalid_input',
    );
    expectError(
      await me.call('post', 'my-account/mfa-verifications', { type: 'WebAuthn' }, await me.proof()),
      400,
      'guard.invalid_input',
    );
  });

  it('refuses the Account API without a user token', async () => {
    expectError(await service.http.get('api/my-account/mfa-verifications'), 401, 'auth.authorization_header_missing');
    expectError(
      await service.http.get('api/my-account/mfa-verifications', { headers: { authorization: 'Bearer nope' } }),
      401,
      'auth.unauthorized',
    );
  });

  it("admins list a user's factors without secrets and remove one (also through @logto/api)", async () => {
    const user = await signedInUser();
    const me = account(user.token);
    const { secret } = (await me.call('post', 'my-account/mfa-verifications/totp-secret/generate')).body;
    await me.call(
      'post',
      'my-account/mfa-verifications',
      { type: 'Totp', secret, code: await totp(secret) },
      await me.proof(),
    );
    const { codes } = (await me.call('post', 'my-account/mfa-verifications/backup-codes/generate')).body;
    await me.call('post', 'my-account/mfa-verifications', { type: 'BackupCode', codes }, await me.proof());

    const apiClient = logtoManagementClient(service);
    const listed = await apiClient.GET('/api/users/{userId}/mfa-verifications', {
      params: { path: { userId: user.id } },
    });
    expect(listed.response.status, JSON.stringify(listed.error)).to.equal(200);
    expect(listed.data!.map((factor) => factor.type).sort()).to.deep.equal(['BackupCode', 'Totp']);
    for (const factor of listed.data!) {
      expect(factor).to.have.property('id').that.is.a('string');
      expect(factor).to.have.property('createdAt').that.is.a('string');
      expect(JSON.stringify(factor)).to.not.include(secret);
    }
    const totpFactor = listed.data!.find((factor) => factor.type === 'Totp')!;

    const removed = await apiClient.DELETE('/api/users/{userId}/mfa-verifications/{verificationId}', {
      params: { path: { userId: user.id, verificationId: totpFactor.id } },
    });
    expect(removed.response.status).to.equal(204);
    const left = await service.api.get(`users/${user.id}/mfa-verifications`);
    expect(left.body.map((factor: { type: string }) => factor.type)).to.deep.equal(['BackupCode']);

    expectError(
      await service.api.delete(`users/${user.id}/mfa-verifications/${totpFactor.id}`),
      404,
      'entity.not_exists_with_id',
    );
    expectError(await service.api.get('users/no-such-user/mfa-verifications'), 404, 'entity.not_exists_with_id');
    expectError(
      await service.api.delete(`users/no-such-user/mfa-verifications/${totpFactor.id}`),
      404,
      'entity.not_exists_with_id',
    );
    expect((await service.http.get(`api/users/${user.id}/mfa-verifications`)).statusCode).to.equal(401);
  });
});
