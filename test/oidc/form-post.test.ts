import { createHash, randomBytes } from 'node:crypto';
import { expect } from 'chai';
import * as client from 'openid-client';

import { Browser } from '../experience/browser.ts';
import { createApplication } from '../support/fixtures.ts';
import { startService, type TestService } from '../support/service.ts';

const redirectUri = 'http://app.test/callback';
const postLogoutRedirectUri = 'http://app.test/signed-out';

/** OIDC Core §3.1.2.1: the authorization endpoint takes POST (a form) as well as GET; so does logout. */
describe('OIDC: requests posted as forms', () => {
  let service: TestService;
  let app: { id: string };
  before(async () => {
    service = await startService();
    app = await createApplication(service, 'SPA', {
      oidcClientMetadata: { redirectUris: [redirectUri], postLogoutRedirectUris: [postLogoutRedirectUri] },
    });
    await service.api.post('users', { json: { username: 'grace', password: 'Correct-Horse-9' } });
  });
  after(() => service.stop());

  /** Posts the authorization request as a browser submits a form, and follows the answer to the sign-in page. */
  async function postAuthorization(browser: Browser, extra: Record<string, string> = {}) {
    const verifier = randomBytes(32).toString('base64url');
    const state = randomBytes(8).toString('hex');
    const form = {
      client_id: app.id,
      redirect_uri: redirectUri,
      response_type: 'code',
      scope: 'openid profile',
      state,
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
      ...extra,
    };
    const posted = await browser.client.post('oidc/auth', { form, responseType: 'text' });
    expect(posted.statusCode, posted.body).to.equal(303);
    const location = new URL(String(posted.headers.location), `${service.url}/oidc/auth`);
    expect(location.pathname).to.equal('/oidc/auth');
    expect(Object.fromEntries(location.searchParams)).to.deep.equal(form);
    const answered = await browser.client.get(location.href.replace(`${service.url}/`, ''), { responseType: 'text' });
    return { verifier, state, answered };
  }

  it('a posted authorization request signs the user in and ends in tokens (authorization code + PKCE)', async () => {
    const browser = new Browser(service);
    const { verifier, state, answered } = await postAuthorization(browser);
    expect(answered.headers.location).to.equal('/sign-in');

    expect((await browser.call('put', 'api/experience', { interactionEvent: 'SignIn' })).statusCode).to.equal(204);
    const verified = await browser.call('post', 'api/experience/verification/password', {
      identifier: { type: 'username', value: 'grace' },
      password: 'Correct-Horse-9',
    });
    expect(verified.statusCode, JSON.stringify(verified.body)).to.equal(200);
    expect(
      (await browser.call('post', 'api/experience/identification', { verificationId: verified.body.verificationId }))
        .statusCode,
    ).to.equal(204);
    const submitted = await browser.call('post', 'api/experience/submit');
    expect(submitted.statusCode, JSON.stringify(submitted.body)).to.equal(200);
    const back = await browser.followToApplication(submitted.body.redirectTo);
    expect(back.origin + back.pathname).to.equal(redirectUri);

    // The application finishes with a real OIDC client, as it would after a GET.
    const configuration = await client.discovery(new URL(`${service.url}/oidc`), app.id, undefined, client.None(), {
      // eslint-disable-next-line @typescript-eslint/no-deprecated -- deprecated only to stand out: the test service is plain http on 127.0.0.1
      execute: [client.allowInsecureRequests],
    });
    const tokens = await client.authorizationCodeGrant(configuration, back, {
      pkceCodeVerifier: verifier,
      expectedState: state,
    });
    expect(tokens.claims()?.aud).to.equal(app.id);
    const info = await client.fetchUserInfo(configuration, tokens.access_token, tokens.claims()!.sub);
    expect(info).to.include({ username: 'grace' });

    // The session the first sign-in left is used by a second posted request: no sign-in page.
    const again = await postAuthorization(browser, { prompt: 'none' });
    const landed = await browser.followToApplication(
      new URL(String(again.answered.headers.location), `${service.url}/oidc/auth`).href,
    );
    expect(landed.origin + landed.pathname).to.equal(redirectUri);
    expect(landed.searchParams.get('code')).to.be.a('string');
    expect(landed.searchParams.get('state')).to.equal(again.state);
  });

  it('a posted request with a bad client is the same error as by GET; a body that is no form is 415', async () => {
    const browser = new Browser(service);
    const posted = await browser.client.post('oidc/auth', {
      form: { client_id: 'nobody', response_type: 'code', scope: 'openid' },
      responseType: 'text',
    });
    expect(posted.statusCode).to.equal(303);
    const answered = await browser.client.get(`oidc/${String(posted.headers.location)}`, { responseType: 'text' });
    const byGet = await browser.client.get('oidc/auth?client_id=nobody&response_type=code&scope=openid', {
      responseType: 'text',
    });
    expect(answered.statusCode).to.equal(byGet.statusCode).and.to.equal(400);

    const json = await browser.client.post('oidc/auth', { json: { client_id: app.id } });
    expect(json.statusCode).to.equal(415);
    expect(json.body).to.include({ error: 'invalid_request' });
    const huge = await browser.client.post('oidc/auth', { form: { client_id: app.id, state: 'x'.repeat(10_000) } });
    expect(huge.statusCode).to.equal(413);
  });

  it('RP-initiated logout takes a posted form too', async () => {
    const browser = new Browser(service);
    const posted = await browser.client.post('oidc/session/end', {
      form: { client_id: app.id, post_logout_redirect_uri: postLogoutRedirectUri },
      responseType: 'text',
    });
    expect(posted.statusCode).to.equal(303);
    expect(posted.headers.location).to.equal(
      `end?${new URLSearchParams({ client_id: app.id, post_logout_redirect_uri: postLogoutRedirectUri })}`,
    );
    const answered = await browser.client.get(`oidc/session/${String(posted.headers.location)}`, {
      responseType: 'text',
    });
    expect(answered.statusCode).to.equal(200);
    expect(answered.body).to.include('<form');
  });
});
