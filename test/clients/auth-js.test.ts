import { Auth, type AuthConfig } from '@auth/core';
import { expect } from 'chai';

import { Browser } from '../experience/browser.ts';
import { createApplication } from '../support/fixtures.ts';
import { startService, type TestService } from '../support/service.ts';
import { submitPasswordSignIn } from '../support/sign-in.ts';

const app = 'http://app.test';

/**
 * Auth.js (@auth/core, what next-auth v5 and the SvelteKit and Express adapters run) with its generic
 * OIDC provider, configured as its docs say: id, issuer, client id and secret. The application's
 * requests are handed to Auth() as a framework would; the person's browser goes through the hosted
 * pages' API.
 */
describe('Auth.js (generic OIDC provider) with its defaults', () => {
  let service: TestService;
  let config: AuthConfig;
  const person = { username: 'authjs_user', password: 'Correct-Horse-9' };

  before(async () => {
    service = await startService();
    await service.api.post('users', {
      json: { ...person, name: 'Ada Auth', primaryEmail: 'ada@example.com', avatar: 'https://img.example.com/a.png' },
    });
    const client = await createApplication(service, 'Traditional', {
      oidcClientMetadata: { redirectUris: [`${app}/auth/callback/identity`], postLogoutRedirectUris: [] },
    });
    config = {
      providers: [
        {
          id: 'identity',
          name: 'Identity',
          type: 'oidc',
          issuer: service.config.issuer,
          clientId: client.id,
          clientSecret: client.secret,
        },
      ],
      secret: 'a-secret-of-32-characters-or-more-for-authjs',
      trustHost: true,
      basePath: '/auth',
    };
  });
  after(() => service.stop());

  it('signs a person in and shows their name, email and picture in session.user', async () => {
    const jar = new Map<string, string>();
    const call = async (path: string, init: RequestInit = {}) => {
      const headers = new Headers(init.headers);
      headers.set('cookie', [...jar].map(([name, value]) => `${name}=${value}`).join('; '));
      const response = await Auth(new Request(`${app}${path}`, { ...init, headers }), config);
      for (const cookie of response.headers.getSetCookie()) {
        const [pair] = cookie.split(';');
        const [name, ...value] = pair.split('=');
        jar.set(name, value.join('='));
      }
      return response;
    };

    const { csrfToken } = (await (await call('/auth/csrf')).json()) as { csrfToken: string };
    const signIn = await call('/auth/signin/identity', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrfToken, callbackUrl: `${app}/` }).toString(),
    });
    const authorization = String(signIn.headers.get('location'));
    expect(authorization.startsWith(`${service.config.issuer}/auth?`), authorization).to.equal(true);

    const browser = new Browser(service);
    await browser.client.get(authorization.replace(`${service.url}/`, ''), { responseType: 'text' });
    const done = await submitPasswordSignIn(browser, person);
    const back = await browser.followToApplication(String(done.body.redirectTo));
    expect(back.origin).to.equal(app);

    const callback = await call(`${back.pathname}${back.search}`);
    expect(callback.status).to.equal(302);
    expect(callback.headers.get('location')).to.equal(`${app}/`);

    const session = (await (await call('/auth/session')).json()) as { user?: Record<string, unknown> };
    expect(session.user).to.include({
      name: 'Ada Auth',
      email: 'ada@example.com',
      image: 'https://img.example.com/a.png',
    });
  });
});
