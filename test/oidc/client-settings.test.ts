import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { createRemoteJWKSet, decodeJwt, jwtVerify } from 'jose';

import { Browser } from '../experience/browser.ts';
import { Receiver } from '../hooks/receiver.ts';
import { createApplication } from '../support/fixtures.ts';
import { startService, type TestService } from '../support/service.ts';
import { signIn, submitPasswordSignIn } from '../support/sign-in.ts';

const redirectUri = 'http://app.test/callback';

/** Every stored client setting acts as Logto's does: CORS origins, back-channel logout, device flow, grant limit. */
describe('client settings that act', () => {
  let service: TestService;
  const person = { username: 'settled', password: 'Correct-Horse-9' };
  let userId: string;

  before(async () => {
    service = await startService();
    userId = (await service.api.post('users', { json: person })).body.id;
  });
  after(() => service.stop());

  it('corsAllowedOrigins: the token, userinfo and revocation endpoints answer an SPA from that origin', async () => {
    const app = await createApplication(service, 'SPA', {
      oidcClientMetadata: { redirectUris: [redirectUri], postLogoutRedirectUris: [] },
      customClientMetadata: { corsAllowedOrigins: ['https://spa.example.com'] },
    });
    const tokens = await signIn(service, { clientId: app.id, redirectUri }, person, { scope: 'openid' });
    const preflight = (origin: string, path: string) =>
      service.http.got(path, {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': 'POST' },
        responseType: 'text',
      });
    const call = (origin: string) =>
      service.http.post('oidc/token', {
        headers: { origin },
        form: { grant_type: 'refresh_token', refresh_token: 'none', client_id: app.id },
      });
    for (const origin of ['https://spa.example.com', 'http://app.test']) {
      expect((await call(origin)).headers['access-control-allow-origin'], origin).to.equal(origin);
      for (const path of ['oidc/token', 'oidc/me', 'oidc/token/revocation']) {
        expect((await preflight(origin, path)).headers['access-control-allow-methods'], path).to.be.a('string');
      }
    }
    const me = await service.http.get('oidc/me', {
      headers: { origin: 'https://spa.example.com', authorization: `Bearer ${tokens.access_token}` },
    });
    expect(me.statusCode).to.equal(200);
    expect(me.headers['access-control-allow-origin']).to.equal('https://spa.example.com');
    expect((await call('https://elsewhere.example.com')).headers['access-control-allow-origin']).to.equal(undefined);
  });

  it('backchannelLogoutUri: ending the session sends a signed logout token naming the session', async () => {
    const receiver = await Receiver.start();
    try {
      const app = await createApplication(service, 'Traditional', {
        oidcClientMetadata: {
          redirectUris: [redirectUri],
          postLogoutRedirectUris: [],
          backchannelLogoutUri: receiver.url,
          backchannelLogoutSessionRequired: true,
        },
      });
      const browser = new Browser(service);
      await browser.authorize(app.id, redirectUri, { scope: 'openid' });
      const done = await submitPasswordSignIn(browser, person);
      await browser.followToApplication(String(done.body.redirectTo));

      const page = await browser.client.get(`oidc/session/end?client_id=${app.id}`, { responseType: 'text' });
      const xsrf = /name="xsrf" value="([^"]+)"/.exec(page.body)?.[1];
      expect(xsrf, page.body).to.be.a('string');
      const confirmed = await browser.client.post('oidc/session/end/confirm', {
        form: { xsrf: xsrf!, logout: 'yes' },
        responseType: 'text',
      });
      expect(confirmed.statusCode).to.equal(303);
      await receiver.waitFor(1, 5000);
      expect(receiver.requests).to.have.length(1);
      const logoutToken = new URLSearchParams(receiver.requests[0].body).get('logout_token');
      const { payload } = await jwtVerify(logoutToken!, createRemoteJWKSet(new URL(`${service.url}/oidc/jwks`)), {
        issuer: service.config.issuer,
        audience: app.id,
      });
      expect(payload.sub).to.equal(userId);
      expect(payload.sid).to.be.a('string');
      expect(payload.events).to.deep.equal({ 'http://schemas.openid.net/event/backchannel-logout': {} });
    } finally {
      await receiver.close();
    }
  });

  it('isDeviceFlow: a native application signs a person in on another device (RFC 8628)', async () => {
    const app = await createApplication(service, 'Native', { customClientMetadata: { isDeviceFlow: true } });
    const started = await service.http.post('oidc/device/auth', {
      form: { client_id: app.id, scope: 'openid profile' },
    });
    expect(started.statusCode, JSON.stringify(started.body)).to.equal(200);
    const { device_code: deviceCode, user_code: userCode, verification_uri: verificationUri } = started.body;
    expect(verificationUri).to.equal(`${service.config.issuer}/device`);
    const poll = () =>
      service.http.post('oidc/token', {
        form: {
          grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
          device_code: deviceCode,
          client_id: app.id,
        },
      });
    expect((await poll()).body).to.include({ error: 'authorization_pending' });

    // On the other device: the code page, then the sign-in page.
    const browser = new Browser(service);
    const form = await browser.client.get('oidc/device', { responseType: 'text' });
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(form.body)?.[1];
    const entered = await browser.client.post('oidc/device', {
      form: { xsrf: xsrf!, user_code: userCode, confirm: 'yes' },
      responseType: 'text',
    });
    expect(entered.headers.location, entered.body).to.equal('/sign-in');
    const done = await submitPasswordSignIn(browser, person);
    const resumed = await browser.client.get(
      String(done.body.redirectTo).replace(service.config.endpoint, service.url).replace(`${service.url}/`, ''),
      { responseType: 'text' },
    );
    expect(resumed.statusCode, resumed.body).to.equal(200);

    const tokens = await poll();
    expect(tokens.statusCode, JSON.stringify(tokens.body)).to.equal(200);
    expect(decodeJwt(tokens.body.id_token)).to.include({ sub: userId, username: person.username, aud: app.id });
  });

  it("isDeviceFlow: only for native applications, and fixed once created (Logto's errors)", async () => {
    for (const type of ['SPA', 'Traditional']) {
      const refused = await service.api.post('applications', {
        json: { name: 'device', type, customClientMetadata: { isDeviceFlow: true } },
      });
      expect(refused.statusCode).to.equal(422);
      expect(refused.body.code).to.equal('application.device_flow_native_only');
    }
    const device = await createApplication(service, 'Native', { customClientMetadata: { isDeviceFlow: true } });
    const changed = await service.api.patch(`applications/${device.id}`, {
      json: { customClientMetadata: { isDeviceFlow: false } },
    });
    expect(changed.statusCode).to.equal(422);
    expect(changed.body.code).to.equal('application.device_flow_not_changeable');
    const kept = await service.api.patch(`applications/${device.id}`, {
      json: { customClientMetadata: { isDeviceFlow: true, idTokenTtl: 3600 } },
    });
    expect(kept.statusCode).to.equal(200);
    // Logto replaces customClientMetadata whole: leaving isDeviceFlow out turns it off, a change.
    const omitted = await service.api.patch(`applications/${device.id}`, {
      json: { customClientMetadata: { idTokenTtl: 3600 } },
    });
    expect(omitted.statusCode).to.equal(422);
    expect(omitted.body.code).to.equal('application.device_flow_not_changeable');
    const plain = await createApplication(service, 'Native', {
      oidcClientMetadata: { redirectUris: ['com.example.app:/callback'], postLogoutRedirectUris: [] },
    });
    const becoming = await service.api.patch(`applications/${plain.id}`, {
      json: { customClientMetadata: { isDeviceFlow: true } },
    });
    expect(becoming.statusCode).to.equal(422);
    expect(becoming.body.code).to.equal('application.device_flow_not_changeable');
  });

  it('maxAllowedGrants: signing in on a third browser revokes the oldest grant and its tokens', async () => {
    const app = await createApplication(service, 'SPA', {
      oidcClientMetadata: { redirectUris: [redirectUri], postLogoutRedirectUris: [] },
      customClientMetadata: { maxAllowedGrants: 2 },
    });
    const client = { clientId: app.id, redirectUri };
    const refreshTokens: string[] = [];
    for (let browser = 0; browser < 3; browser++) {
      refreshTokens.push(
        String((await signIn(service, client, person, { scope: 'openid offline_access' })).refresh_token),
      );
      await sleep(1100); // grants are ordered by their issue time, in seconds
    }
    const grants = (await service.api.get(`users/${userId}/grants`)).body.grants.filter(
      (grant: { payload: { clientId: string } }) => grant.payload.clientId === app.id,
    );
    expect(grants).to.have.length(2);
    const refresh = (token: string) =>
      service.http.post('oidc/token', {
        form: { grant_type: 'refresh_token', refresh_token: token, client_id: app.id },
      });
    expect((await refresh(refreshTokens[0])).body).to.include({ error: 'invalid_grant' });
    expect((await refresh(refreshTokens[2])).statusCode).to.equal(200);
  });
});
