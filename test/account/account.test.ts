import { expect } from 'chai';

import { Browser } from '../experience/browser.ts';
import { createApplication } from '../support/fixtures.ts';
import { type HttpResponse, startService, type TestService } from '../support/service.ts';

const redirectUri = 'http://app.test/callback';

describe("Account API: self-service with the user's own token", () => {
  let service: TestService;
  let token: string;
  let userId: string;

  /** Signs alice in through the real flow and returns her opaque access token (scope openid). */
  async function signIn(username: string, password: string): Promise<string> {
    const app = await createApplication(service, 'SPA', {
      oidcClientMetadata: { redirectUris: [redirectUri], postLogoutRedirectUris: [] },
    });
    const browser = new Browser(service);
    const { verifier } = await browser.authorize(app.id, redirectUri, { scope: 'openid profile email' });
    await browser.call('put', 'api/experience', { interactionEvent: 'SignIn' });
    const { body } = await browser.call('post', 'api/experience/verification/password', {
      identifier: { type: 'username', value: username },
      password,
    });
    await browser.call('post', 'api/experience/identification', { verificationId: body.verificationId });
    const done = await browser.call('post', 'api/experience/submit');
    const landed = await browser.followToApplication(done.body.redirectTo);
    const tokens = await service.http.post('oidc/token', {
      form: {
        grant_type: 'authorization_code',
        code: landed.searchParams.get('code')!,
        code_verifier: verifier,
        client_id: app.id,
        redirect_uri: redirectUri,
      },
    });
    return tokens.body.access_token;
  }

  const call = (
    method: 'get' | 'post' | 'delete',
    path: string,
    json?: unknown,
    proof?: string,
  ): Promise<HttpResponse> =>
    service.http[method](`api/${path}`, {
      headers: { authorization: `Bearer ${token}`, ...(proof && { 'logto-verification-id': proof }) },
      ...(json !== undefined && { json }),
    });

  const latestCode = async (recipient: string) =>
    (
      (await service.api.get('verification-messages', { searchParams: { recipient } })).body as Array<{ code: string }>
    )[0].code;

  before(async () => {
    service = await startService();
    userId = (await service.api.post('users', { json: { username: 'alice', password: 'Correct-Horse-9' } })).body.id;
    token = await signIn('alice', 'Correct-Horse-9');
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

    // A proof is used once.
    const again = await call('delete', 'my-account/primary-email', undefined, proof.body.verificationRecordId);
    expect(again.statusCode).to.equal(404);
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
