import { expect } from 'chai';

import { accountCenterFields } from '../../lib/sign-in-experience/account-center/account-center-schemas.ts';
import { accountApi, type AccountCall } from '../support/account-api.ts';
import { expectError, expectStatus } from '../support/expect.ts';
import { createApplication } from '../support/fixtures.ts';
import { startService, type TestService } from '../support/service.ts';
import { signIn } from '../support/sign-in.ts';
import { ifSet, unique } from '../support/values.ts';

const redirectUri = 'http://app.test/callback';
const password = 'Correct-Horse-9';
const allEdit = Object.fromEntries(accountCenterFields.map((field) => [field, 'Edit']));

/** Logto's account center (`/api/account-center`) and what it does to the Account API. */
describe('account center: what the Account API shows and lets a user change', () => {
  let service: TestService;

  let call: AccountCall;
  const setCenter = async (json: Record<string, unknown>) => {
    const response = await service.api.patch('account-center', { json });
    expectStatus(response, 200);
    return response.body;
  };

  before(async () => {
    service = await startService();
    const username = unique('center');
    await service.api.post('users', {
      json: { username, password, name: 'Ada', primaryEmail: `${username}@example.com` },
    });
    const app = await createApplication(service, 'SPA', {
      oidcClientMetadata: { redirectUris: [redirectUri], postLogoutRedirectUris: [] },
    });
    const tokens = await signIn(
      service,
      { clientId: app.id, redirectUri },
      { username, password },
      { scope: 'openid profile email phone' },
    );
    call = accountApi(service, tokens.access_token);
  });
  after(() => ifSet(service)?.stop());

  it('is open with every field changeable until an administrator changes it', async () => {
    const center = await service.api.get('account-center');
    expectStatus(center, 200);
    expect(center.body).to.deep.include({ id: 'default', enabled: true, fields: allEdit });
    const account = await call('get', 'my-account');
    expectStatus(account, 200);
    expect(account.body).to.include.keys('username', 'name', 'avatar', 'primaryEmail', 'primaryPhone');
  });

  it('PATCH replaces the fields it is given (Logto): what is not named is Off', async () => {
    const updated = await setCenter({ enabled: true, fields: { username: 'Edit' } });
    expect(updated).to.deep.include({ enabled: true, fields: { username: 'Edit' } });
    expect((await service.api.get('account-center')).body.fields).to.deep.equal({ username: 'Edit' });
    expectError(
      await service.api.patch('account-center', { json: { fields: { name: 'Maybe' } } }),
      400,
      'guard.invalid_input',
    );
    expectError(
      await service.api.patch('account-center', { json: { webauthnRelatedOrigins: [] } }),
      400,
      'guard.invalid_input',
    );
  });

  it('a ReadOnly field is shown, an Off one is not, and neither can be changed', async () => {
    await setCenter({ enabled: true, fields: { name: 'ReadOnly' } });
    const account = await call('get', 'my-account');
    expectStatus(account, 200);
    expect(account.body).to.include({ name: 'Ada' });
    for (const hidden of ['avatar', 'username', 'primaryEmail', 'primaryPhone']) {
      expect(account.body).to.not.have.property(hidden);
    }
    const proof = await call('post', 'verifications/password', { password });
    expectStatus(proof, 201);
    const proofId = proof.body.verificationRecordId;
    expectError(
      await call('post', 'my-account/password', { password: 'Another-Horse-8' }, proofId),
      400,
      'account_center.field_not_editable',
    );
    expectError(
      await call(
        'post',
        'my-account/primary-email',
        { email: 'new@example.com', newIdentifierVerificationRecordId: 'x' },
        proofId,
      ),
      400,
      'account_center.field_not_editable',
    );
    expectError(
      await call('delete', 'my-account/primary-phone', undefined, proofId),
      400,
      'account_center.field_not_editable',
    );
    expectError(await call('get', 'my-account/mfa-verifications'), 400, 'account_center.field_not_editable');
    expectError(
      await call('post', 'my-account/mfa-verifications/totp-secret/generate'),
      400,
      'account_center.field_not_editable',
    );
    // Nothing changed: the password still signs in.
    expectStatus(await call('post', 'verifications/password', { password }), 201);
  });

  it('an Edit field is changed as before', async () => {
    await setCenter({ fields: { password: 'Edit', mfa: 'ReadOnly' } });
    expectStatus(await call('get', 'my-account/mfa-verifications'), 200);
    const proof = await call('post', 'verifications/password', { password });
    expectStatus(
      await call('post', 'my-account/password', { password: 'Another-Horse-8' }, proof.body.verificationRecordId),
      204,
    );
    expectStatus(await call('post', 'verifications/password', { password: 'Another-Horse-8' }), 201);
    expectStatus(
      await call(
        'post',
        'my-account/password',
        { password },
        (await call('post', 'verifications/password', { password: 'Another-Horse-8' })).body.verificationRecordId,
      ),
      204,
    );
  });

  it('disabled, every Account API route answers 400 account_center.not_enabled', async () => {
    await setCenter({ enabled: false });
    for (const [method, path] of [
      ['get', 'my-account'],
      ['post', 'verifications/password'],
      ['get', 'my-account/mfa-verifications'],
      ['get', 'my-account/grants'],
    ] as const) {
      expectError(
        await call(method, path, method === 'post' ? { password } : undefined),
        400,
        'account_center.not_enabled',
      );
    }
    await setCenter({ enabled: true, fields: allEdit });
    expectStatus(await call('get', 'my-account'), 200);
  });
});
