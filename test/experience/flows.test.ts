import { expect } from 'chai';
import { decodeJwt } from 'jose';

import { waitForLog } from '../audit/support.ts';
import { createApplication, createResource } from '../support/fixtures.ts';
import { startService, type TestService } from '../support/service.ts';
import { Browser } from './browser.ts';

const redirectUri = 'http://app.test/callback';

describe('sign-in experience: OIDC flows', () => {
  let service: TestService;
  let app: { id: string; secret: string };
  before(async () => {
    service = await startService();
    app = await createApplication(service, 'SPA', {
      oidcClientMetadata: { redirectUris: [redirectUri], postLogoutRedirectUris: [] },
    });
  });
  after(() => service.stop());

  async function exchange(code: string, verifier: string, extra: Record<string, string> = {}) {
    return service.http.post('oidc/token', {
      form: {
        grant_type: 'authorization_code',
        code,
        code_verifier: verifier,
        client_id: app.id,
        redirect_uri: redirectUri,
        ...extra,
      },
    });
  }

  it('registers with a username and password, then signs in again, and the application gets tokens', async () => {
    const browser = new Browser(service);
    const { verifier, location, state } = await browser.authorize(app.id, redirectUri, {
      scope: 'openid profile offline_access',
      prompt: 'consent',
    });
    expect(location).to.equal('/sign-in');

    expect((await browser.call('put', 'api/experience', { interactionEvent: 'Register' })).statusCode).to.equal(204);
    const identity = await browser.call('post', 'api/experience/verification/new-password-identity', {
      identifier: { type: 'username', value: 'alice' },
      password: 'Correct-Horse-9',
    });
    expect(identity.statusCode).to.equal(200);
    const created = await browser.call('post', 'api/experience/identification', {
      verificationId: identity.body.verificationId,
    });
    expect(created.statusCode).to.equal(201);
    const submitted = await browser.call('post', 'api/experience/submit');
    expect(submitted.statusCode).to.equal(200);
    expect(submitted.body.redirectTo).to.match(/\/oidc\/auth\//);

    // prompt=consent (Logto's SDK always sends it): a first-party application is consented to on the
    // person's behalf all the same, as in Logto; no consent page.
    const back = await browser.followToApplication(submitted.body.redirectTo);
    expect(back.origin + back.pathname).to.equal(redirectUri);
    expect(back.searchParams.get('state')).to.equal(state);
    const tokens = await exchange(back.searchParams.get('code')!, verifier);
    expect(tokens.statusCode, JSON.stringify(tokens.body)).to.equal(200);
    expect(tokens.body).to.have.keys('access_token', 'id_token', 'refresh_token', 'expires_in', 'scope', 'token_type');
    const idToken = decodeJwt(tokens.body.id_token);
    // The ID token carries what its scopes grant, as Logto's (not only userinfo).
    expect(idToken).to.include({ aud: app.id, iss: `${service.url}/oidc`, username: 'alice' });

    const me = await service.http.get('oidc/me', { headers: { authorization: `Bearer ${tokens.body.access_token}` } });
    expect(me.statusCode).to.equal(200);
    expect(me.body).to.include({ sub: idToken.sub, username: 'alice' });

    // The refresh token works while the user is active, and stops when they are suspended.
    const refresh = (token: string) =>
      service.http.post('oidc/token', {
        form: { grant_type: 'refresh_token', refresh_token: token, client_id: app.id },
      });
    const refreshed = await refresh(tokens.body.refresh_token);
    expect(refreshed.statusCode, JSON.stringify(refreshed.body)).to.equal(200);
    expect(refreshed.body.access_token).to.be.a('string');

    // Sign in again in a fresh browser.
    const second = new Browser(service);
    const again = await second.authorize(app.id, redirectUri);
    await second.call('put', 'api/experience', { interactionEvent: 'SignIn' });
    const password = await second.call('post', 'api/experience/verification/password', {
      identifier: { type: 'username', value: 'alice' },
      password: 'Correct-Horse-9',
    });
    expect(password.statusCode).to.equal(200);
    expect(
      (await second.call('post', 'api/experience/identification', { verificationId: password.body.verificationId }))
        .statusCode,
    ).to.equal(204);
    const done = await second.call('post', 'api/experience/submit');
    const landed = await second.followToApplication(done.body.redirectTo);
    const secondTokens = await exchange(landed.searchParams.get('code')!, again.verifier);
    expect(secondTokens.statusCode).to.equal(200);
    expect(decodeJwt(secondTokens.body.id_token).sub).to.equal(idToken.sub);

    // Both finished interactions are in the audit log (written in batches: poll briefly).
    const logged = async (logKey: string) =>
      (await waitForLog(service, { userId: idToken.sub!, logKey }, () => true)).payload;
    expect(await logged('Interaction.Register.Submit')).to.include({
      result: 'Success',
      userId: idToken.sub,
      applicationId: app.id,
    });
    expect(await logged('Interaction.SignIn.Submit')).to.include({ result: 'Success', applicationId: app.id });

    await service.api.patch(`users/${idToken.sub}/is-suspended`, { json: { isSuspended: true } });
    const afterSuspension = await refresh(
      secondTokens.body.refresh_token ?? refreshed.body.refresh_token ?? tokens.body.refresh_token,
    );
    expect(afterSuspension.statusCode).to.equal(400);
    expect(afterSuspension.body.error).to.equal('invalid_grant');
  });

  it('issues a JWT for an API resource with the scopes the user holds through roles', async () => {
    const { resource, scopeIds } = await createResource(service, ['read:b', 'write:b']);
    const role = (
      await service.api.post('roles', {
        json: { name: 'b-reader', description: 'reads b', scopeIds: [scopeIds['read:b']] },
      })
    ).body;
    const user = (await service.api.post('users', { json: { username: 'bob', password: 'Sturdy-Tulip-7' } })).body;
    await service.api.post(`users/${user.id}/roles`, { json: { roleIds: [role.id] } });

    const browser = new Browser(service);
    const { verifier } = await browser.authorize(app.id, redirectUri, {
      scope: 'openid read:b write:b',
      resource: resource.indicator,
    });
    await browser.call('put', 'api/experience', { interactionEvent: 'SignIn' });
    const password = await browser.call('post', 'api/experience/verification/password', {
      identifier: { type: 'username', value: 'bob' },
      password: 'Sturdy-Tulip-7',
    });
    await browser.call('post', 'api/experience/identification', { verificationId: password.body.verificationId });
    const done = await browser.call('post', 'api/experience/submit');
    const landed = await browser.followToApplication(done.body.redirectTo);
    const tokens = await exchange(landed.searchParams.get('code')!, verifier, { resource: resource.indicator });
    expect(tokens.statusCode, JSON.stringify(tokens.body)).to.equal(200);
    const accessToken = decodeJwt(tokens.body.access_token);
    expect(accessToken).to.include({ sub: user.id, aud: resource.indicator, scope: 'read:b', client_id: app.id });
  });
});
