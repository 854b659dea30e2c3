import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import express from 'express';
import { auth, requiredScopes } from 'express-oauth2-jwt-bearer';
import * as oauth from 'oauth4webapi';

import { Browser } from '../experience/browser.ts';
import { createApplication, createResource } from '../support/fixtures.ts';
import { startService, type TestService } from '../support/service.ts';
import { submitPasswordSignIn } from '../support/sign-in.ts';

const redirectUri = 'http://app.test/callback';

/**
 * oauth4webapi (panva's OAuth 2 client) with DPoP, signing a person in for an API; the API is an
 * Express app with express-oauth2-jwt-bearer in its strict mode (RFC 9068 checks). Both with their
 * defaults, apart from the plain http the test service speaks.
 */
describe('oauth4webapi with DPoP, and express-oauth2-jwt-bearer (strict) as the API', () => {
  let service: TestService;
  let indicator: string;
  let client: oauth.Client;
  const person = { username: 'dpop_user', password: 'Correct-Horse-9' };

  before(async () => {
    service = await startService();
    const { resource, scopeIds } = await createResource(service, ['read:notes']);
    indicator = resource.indicator;
    const role = (
      await service.api.post('roles', { json: { name: 'r', description: 'r', scopeIds: [scopeIds['read:notes']] } })
    ).body;
    const user = (await service.api.post('users', { json: person })).body;
    await service.api.post(`users/${user.id}/roles`, { json: { roleIds: [role.id] } });
    const app = await createApplication(service, 'SPA', {
      oidcClientMetadata: { redirectUris: [redirectUri], postLogoutRedirectUris: [] },
    });
    client = { client_id: app.id };
  });
  after(() => service.stop());

  it('code + PKCE + DPoP without openid, a DPoP-bound API token, a refresh, and the API accepts the token', async () => {
    // eslint-disable-next-line @typescript-eslint/no-deprecated -- deprecated only to stand out: the test service is plain http on 127.0.0.1
    const insecure = { [oauth.allowInsecureRequests]: true };
    const issuer = new URL(service.config.issuer);
    const as = await oauth.processDiscoveryResponse(
      issuer,
      await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }),
    );
    const keyPair = await oauth.generateKeyPair('ES256');
    const dpop = oauth.DPoP(client, keyPair);
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const url = new URL(as.authorization_endpoint!);
    url.search = new URLSearchParams({
      client_id: client.client_id,
      redirect_uri: redirectUri,
      response_type: 'code',
      scope: 'read:notes offline_access',
      resource: indicator,
      state,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    }).toString();

    const browser = new Browser(service);
    await browser.client.get(url.href.replace(`${service.url}/`, ''), { responseType: 'text' });
    const done = await submitPasswordSignIn(browser, person);
    const back = await browser.followToApplication(String(done.body.redirectTo));

    const params = oauth.validateAuthResponse(as, client, back, state);
    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, redirectUri, verifier, {
        DPoP: dpop,
        additionalParameters: { resource: indicator },
        ...insecure,
      }),
    );
    expect(tokens.token_type).to.equal('dpop');
    expect(tokens.scope).to.equal('read:notes');
    expect(tokens.refresh_token).to.be.a('string');

    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, {
        DPoP: dpop,
        ...insecure,
      }),
    );
    expect(refreshed.token_type).to.equal('dpop');

    // API B: express-oauth2-jwt-bearer, strict (typ at+jwt, RFC 9068 claims), DPoP allowed.
    const api = express();
    api.get(
      '/notes',
      auth({ issuerBaseURL: service.config.issuer, audience: indicator, strict: true }),
      requiredScopes('read:notes'),
      (request, response) => {
        response.json({ sub: request.auth?.payload.sub });
      },
    );
    const server = api.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const notes = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/notes`);
      const answer = await oauth.protectedResourceRequest(refreshed.access_token, 'GET', notes, undefined, undefined, {
        DPoP: dpop,
        ...insecure,
      });
      expect(answer.status, await answer.clone().text()).to.equal(200);
      expect(((await answer.json()) as { sub: string }).sub).to.be.a('string');
    } finally {
      server.close();
    }
  });
});
