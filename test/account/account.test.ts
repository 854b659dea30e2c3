import { expect } from 'chai';

import { accountApi, type AccountCall } from '../support/account-api.ts';
import { createApplication } from '../support/fixtures.ts';
import { startService, type TestService } from '../support/service.ts';
import { signIn } from '../support/sign-in.ts';

const redirectUri = 'http://app.test/callback';

describe("Account API: self-service with the user's own token", () => {
  let service: TestService;
  let userId: string;
  let call: AccountCall;

  const latestCode = async (recipient: string) =>
    (
      (await service.api.get('verification-messages', { searchParams: { recipient } })).body as Array<{ code: string }>
    )[0].code;

  before(async () => {
    service = await startService();
    userId = (await service.api.post('users', { json: { username: 'alice', password: 'Correct-Horse-9' } })).body.id;
    const app = await createApplication(service, 'SPA', {
      oidcClientMetadata: { redirectUris: [redirectUri], postLogoutRedirectUris: [] },
    });
    const tokens = await signIn(
      service,
      { clientId: app.id, redirectUri },
      { username: 'alice', password: 'Correct-Horse-9' },
      { scope: 'openid profile email' },
    );
    call = accountApi(service, tokens.access_token);
  });
  after(() => service.stop());

  it('refuses requests without a valid user token', async () => {
    expect((await service.http.get('api/my-account')).statusCode).to.equal(401);
    const bad = await service.http.get('api/my-account', { headers: { authorization: 'Bearer nope' } });
    expect(bad.statusCode).to.equal(401);
    expect(bad.body.code).to.equal('auth.unauthorized');
  });

  it('shows the account', async () => {
    const { statusCode, body } = await call('get', 'my-account');
    expect(statusCode).to.equal(200);
    expect(body).to.include({ id: userId, username: 'alice', primaryEmail: null, hasPassword: true });
  });

  it('adds a primary email proven by a code, after proving the password', async () => {
    const wrong = await call('post', 'verifications/password', { password: 'nope-nope-1' });
    expect(wrong.statusCode).to.equal(422);
    const proof = await call('post', 'verifications/password', { password: 'Correct-Horse-9' });
    expect(proof.statusCode).to.equal(201);
    expect(proof.body).to.have.keys('verificationRecordId', 'expiresAt');

    const identifier = { type: 'email', value: 'alice@example.com' };
    const sent = await call('post', 'verifications/verification-code', { identifier });
    expect(sent.statusCode).to.equal(201);
    const badCode = await call('post', 'verifications/verification-code/verify', {
      identifier,
      verificationId: sent.body.verificationRecordId,
      code: '000000',
    });
    expect(badCode.statusCode).to.equal(400);
    const verified = await call('post', 'verifications/verification-code/verify', {
      identifier,
      verificationId: sent.body.verificationRecordId,
      code: await latestCode('alice@example.com'),
    });
    expect(verified.statusCode).to.equal(200);

    const withoutProof = await call('post', 'my-account/primary-email', {
      email: 'alice@example.com',
      newIdentifierVerificationRecordId: sent.body.verificationRecordId,
    });
    expect(withoutProof.statusCode).to.equal(401);
    expect(withoutProof.body.code).to.equal('verification_record.permission_denied');

    const set = await call(
      'post',
      'my-account/primary-email',
      { email: 'alice@example.com', newIdentifierVerificationRecordId: sent.body.verificationRecordId },
      proof.body.verificationRecordId,
    );
    expect(set.statusCode).to.equal(204);
    expect((await service.api.get(`users/${userId}`)).body.primaryEmail).to.equal('alice@example.com');

    // As in Logto, a proof covers the changes of its ten minutes; alice keeps her username to sign in with.
    const again = await call('delete', 'my-account/primary-email', undefined, proof.body.verificationRecordId);
    expect(again.statusCode).to.equal(204);
    expect((await service.api.get(`users/${userId}`)).body.primaryEmail).to.equal(null);
  });

  it('changes the password with a fresh proof, checked against the policy', async () => {
    const proof = (await call('post', 'verifications/password', { password: 'Correct-Horse-9' })).body
      .verificationRecordId;
    const weak = await call('post', 'my-account/password', { password: 'short' }, proof);
    expect(weak.statusCode).to.equal(422);
    expect(weak.body.code).to.equal('password.rejected');
    expect((await call('post', 'my-account/password', { password: 'Brand-New-Kite-4' }, proof)).statusCode).to.equal(
      204,
    );
    const check = await service.api.post(`users/${userId}/password/verify`, { json: { password: 'Brand-New-Kite-4' } });
    expect(check.statusCode).to.equal(204);
  });
});
