import { createHash, randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { decodeJwt } from 'jose';

import { Browser } from '../experience/browser.ts';
import { createApplication, createResource } from '../support/fixtures.ts';
import { startService, type TestService } from '../support/service.ts';
import { submitPasswordSignIn } from '../support/sign-in.ts';

const redirectUri = 'http://app.test/callback';

/**
 * OAuth 2.0 / 2.1 clients (MCP clients, most OAuth libraries) send no `openid`: API scopes, or no
 * scope at all, with `resource`. A person signs in and the client gets a code, then that API's JWT.
 */
describe('OAuth requests without openid', () => {
  let service: TestService;
  let client: { id: string };
  let indicator: string;
  const person = { username: 'oauth_only', password: 'Correct-Horse-9' };

  before(async () => {
    service = await startService();
    const { resource, scopeIds } = await createResource(service, ['read', 'write']);
    indicator = resource.indicator;
    const role = (
      await service.api.post('roles', { json: { name: 'readers', description: 'read', scopeIds: [scopeIds.read] } })
    ).body;
    const user = (await service.api.post('users', { json: person })).body;
    await service.api.post(`users/${user.id}/roles`, { json: { roleIds: [role.id] } });
    client = await createApplication(service, 'SPA', {
      oidcClientMetadata: { redirectUris: [redirectUri], postLogoutRedirectUris: [] },
    });
  });
  after(() => service.stop());

  /** Signs the person in for `scope` (absent: no scope parameter) and exchanges the code with `resource`. */
  async function signInFor(scope: string | undefined) {
    const browser = new Browser(service);
    const verifier = randomBytes(32).toString('base64url');
    const state = randomBytes(8).toString('hex');
    const { location } = await authorizeAs(browser, scope, verifier, state);
    expect(location).to.equal('/sign-in');
    const done = await submitPasswordSignIn(browser, person);
    const back = await browser.followToApplication(String(done.body.redirectTo));
    expect(back.searchParams.get('error'), back.href).to.equal(null);
    expect(back.searchParams.get('state')).to.equal(state);
    expect(back.searchParams.get('iss')).to.equal(service.config.issuer);
    return exchange(back, verifier, { resource: indicator });
  }

  /** The code exchange a public client makes (PKCE). */
  async function exchange(back: URL, verifier: string, extra: Record<string, string> = {}) {
    const tokens = await service.http.post('oidc/token', {
      form: {
        grant_type: 'authorization_code',
        code: back.searchParams.get('code') ?? '',
        code_verifier: verifier,
        client_id: client.id,
        redirect_uri: redirectUri,
        ...extra,
      },
    });
    expect(tokens.statusCode, JSON.stringify(tokens.body)).to.equal(200);
    return tokens.body;
  }

  /** The authorization request as the client sends it: exactly this scope (or none), PKCE, `resource`. */
  async function authorizeAs(browser: Browser, scope: string | undefined, verifier: string, state: string) {
    const query = new URLSearchParams({
      client_id: client.id,
      redirect_uri: redirectUri,
      response_type: 'code',
      state,
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
      resource: indicator,
      ...(scope !== undefined && { scope }),
    });
    const response = await browser.client.get(`oidc/auth?${query}`, { responseType: 'text' });
    return { location: String(response.headers.location) };
  }

  for (const [asked, issued] of [
    [undefined, ''],
    ['read', 'read'],
    ['read write', 'read'],
    ['write', ''],
  ] as const) {
    it(`scope ${asked === undefined ? 'absent' : `"${asked}"`}: a code, then the API's JWT with "${issued}" and no ID token`, async () => {
      const tokens = await signInFor(asked);
      expect(tokens.id_token).to.equal(undefined);
      expect(tokens.token_type).to.equal('Bearer');
      const claims = decodeJwt(tokens.access_token);
      expect(claims).to.include({ aud: indicator, scope: issued, client_id: client.id, iss: service.config.issuer });
      expect(tokens.scope ?? '').to.equal(issued);
    });
  }

  it('a client cannot set the marker of the openid the service adds: its own openid stays, with its ID token', async () => {
    const browser = new Browser(service);
    const { verifier, state } = await browser.authorize(client.id, redirectUri, {
      scope: 'openid',
      resource: indicator,
      openid_implied: 'true',
    });
    const done = await submitPasswordSignIn(browser, person);
    const back = await browser.followToApplication(String(done.body.redirectTo));
    expect(back.searchParams.get('state')).to.equal(state);
    const tokens = await exchange(back, verifier);
    expect(decodeJwt(tokens.id_token)).to.include({ aud: client.id });
  });

  it('the metadata is at every well-known path a client tries, and says the response carries iss (RFC 9207)', async () => {
    for (const path of [
      '.well-known/oauth-authorization-server/oidc',
      '.well-known/openid-configuration/oidc',
      'oidc/.well-known/openid-configuration',
      'oidc/.well-known/oauth-authorization-server',
    ]) {
      const response = await service.http.get(path);
      expect(response.statusCode, path).to.equal(200);
      expect(response.headers['content-type'], path).to.match(/^application\/json/);
      expect(response.body, path).to.include({
        issuer: service.config.issuer,
        authorization_response_iss_parameter_supported: true,
      });
      expect(response.body.code_challenge_methods_supported, path).to.deep.equal(['S256']);
    }
  });
});
