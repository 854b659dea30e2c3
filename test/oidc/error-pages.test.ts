import { expect } from 'chai';

import { buildIfStale } from '../support/build.ts';
import { createApplication } from '../support/fixtures.ts';
import { type HttpResponse, startService, type TestService } from '../support/service.ts';

/**
 * The provider's error pages over plain HTTP: a browser (Accept: text/html) gets our page, a client
 * asking for JSON keeps the OAuth error, and nothing from the request reaches the page unescaped.
 * (test/e2e/error-pages.test.ts shows the same pages in Chromium.)
 */
describe("the provider's error pages: HTML or JSON, escaped", () => {
  let service: TestService;
  let application: { id: string };
  const html = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };
  const json = { accept: 'application/json' };

  before(async () => {
    service = await startService();
    application = await createApplication(service, 'SPA', {
      name: 'Notes <img src=x onerror=alert(1)>',
      oidcClientMetadata: {
        redirectUris: ['https://notes.example.com/callback'],
        postLogoutRedirectUris: ['https://notes.example.com/signed-out'],
      },
    });
  });
  after(() => service.stop());

  const authorization = (query: Record<string, string>, headers: Record<string, string>) =>
    service.http.get('oidc/auth', {
      searchParams: {
        response_type: 'code',
        scope: 'openid',
        redirect_uri: 'https://notes.example.com/callback',
        ...query,
      },
      headers,
      responseType: 'text',
    });

  /** Our page: the hosted pages' headers and stylesheet, nothing inline, never the provider's "oops!". */
  function expectOurPage(response: HttpResponse<string>, heading: string) {
    expect(response.headers['content-type']).to.equal('text/html; charset=utf-8');
    expect(response.headers).to.include({
      'content-security-policy':
        "default-src 'self'; img-src 'self' data:; base-uri 'none'; object-src 'none'; form-action 'self'; frame-ancestors 'none'",
      'x-frame-options': 'DENY',
      'cache-control': 'no-store',
    });
    expect(response.body).to.contain(`<h1>${heading}</h1>`);
    expect(response.body).to.match(/<link rel="stylesheet" href="\/experience-assets\/index-[\w-]+\.css" \/>/);
    expect(response.body).not.to.match(/<style|style=|<script|oops/i);
  }

  it('an unknown client: our page for a browser, the OAuth JSON for a client that asks for JSON', async () => {
    const page = await authorization({ client_id: 'no-such-app' }, html);
    expect(page.statusCode).to.equal(400);
    expectOurPage(page, 'This application isn&#39;t known');
    expect(page.body).to.contain('<code>invalid_client</code>');
    expect(page.body).to.contain('You can close this tab, or go back to the application you came from.');

    const answer = await service.http.get('oidc/auth', {
      searchParams: { client_id: 'no-such-app', response_type: 'code', scope: 'openid' },
      headers: json,
    });
    expect(answer.statusCode).to.equal(400);
    expect(answer.headers['content-type']).to.match(/^application\/json/);
    expect(answer.body).to.include({ error: 'invalid_client', error_description: 'client is invalid' });

    // Endpoints whose errors the provider renders only for browsers answer the same way.
    const signOut = await service.http.get('oidc/session/end', {
      searchParams: { client_id: 'no-such-app' },
      headers: html,
      responseType: 'text',
    });
    expect(signOut.statusCode).to.equal(400);
    expectOurPage(signOut, 'This application isn&#39;t known');
    const signOutJson = await service.http.get('oidc/session/end', {
      searchParams: { client_id: 'no-such-app' },
      headers: json,
    });
    expect(signOutJson.body).to.include({ error: 'invalid_client' });
  });

  it('a <script> in a parameter and markup in the application name are shown as text', async () => {
    const injected = '<script>alert(1)</script>"\'&';
    const unknown = await authorization({ client_id: injected }, html);
    expect(unknown.statusCode).to.equal(400);
    expectOurPage(unknown, 'This application isn&#39;t known');
    expect(unknown.body).to.contain('<code>&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;&amp;</code>');

    const redirect = await authorization(
      { client_id: application.id, redirect_uri: 'https://evil.example/"><script>alert(2)</script>' },
      html,
    );
    expect(redirect.statusCode).to.equal(400);
    expectOurPage(redirect, 'This sign-in link isn&#39;t set up correctly');
    expect(redirect.body).to.contain(
      // The whole sentence is escaped (a custom phrase may hold markup too), its apostrophe with it.
      'Notes &lt;img src=x onerror=alert(1)&gt; asked to send you back to an address that isn&#39;t registered for it',
    );
    // The way back is the registered address's origin, not the one asked for.
    expect(redirect.body).to.contain(
      '<a class="button primary" href="https://notes.example.com/">Back to Notes &lt;img src=x onerror=alert(1)&gt;</a>',
    );
    expect(redirect.body).not.to.contain('evil.example');
  });

  it('a sign-out to an address not registered, and a stale confirmation, are explained', async () => {
    const signOut = await service.http.get('oidc/session/end', {
      searchParams: { client_id: application.id, post_logout_redirect_uri: 'https://evil.example/' },
      headers: html,
      responseType: 'text',
    });
    expect(signOut.statusCode).to.equal(400);
    expectOurPage(signOut, 'This sign-out link isn&#39;t set up correctly');
    expect(signOut.body).to.contain('so nothing was done: you are still signed in.');

    // A confirmation with no sign-out behind it (another tab finished it, or the session ended).
    const confirm = await service.http.post('oidc/session/end/confirm', {
      form: { xsrf: 'stale', logout: 'yes' },
      headers: html,
      responseType: 'text',
    });
    expect(confirm.statusCode).to.equal(400);
    expectOurPage(confirm, 'This sign-out page has expired');
  });

  it('an interaction that is not there: "This sign-in took too long"', async () => {
    const page = await service.http.get('oidc/auth/no-such-interaction', { headers: html, responseType: 'text' });
    expect(page.statusCode).to.equal(400);
    expectOurPage(page, 'This sign-in took too long');
    expect(page.body).to.contain('Start again from the application you were signing in to.');
  });

  it("names the sign-in experience's support address when there is one", async () => {
    const saved = await service.api.patch('sign-in-exp', { json: { supportEmail: 'help@example.com' } });
    expect(saved.statusCode).to.equal(200);
    const page = await authorization({ client_id: 'no-such-app' }, html);
    expect(page.body).to.contain('Need help? Write to <a href="mailto:help@example.com">help@example.com</a>.');
    await service.api.patch('sign-in-exp', { json: { supportEmail: null } });
  });

  it('serves /favicon.ico, an icon cached for a day, to GET and HEAD', async () => {
    const icon = await service.http.got.get('favicon.ico', { responseType: 'buffer' });
    expect(icon.statusCode).to.equal(200);
    expect(icon.headers).to.include({
      'content-type': 'image/x-icon',
      'cache-control': 'public, max-age=86400',
      'x-content-type-options': 'nosniff',
    });
    // An ICO holding one 32×32 PNG.
    expect([...icon.body.subarray(0, 8)]).to.deep.equal([0, 0, 1, 0, 1, 0, 32, 32]);
    expect(icon.body.subarray(22, 26).toString('latin1')).to.equal('\x89PNG');
    const head = await service.http.got.head('favicon.ico');
    expect(head.statusCode).to.equal(200);
    expect(head.headers['content-type']).to.equal('image/x-icon');
  });

  it("names the sign-in experience's favicon on every hosted page, and /favicon.ico redirects to it", async () => {
    buildIfStale();
    const favicon = 'https://cdn.example.com/acme/favicon.png';
    const darkFavicon = 'https://cdn.example.com/acme/favicon-dark.png?v="2"';
    const signInPage = () => service.http.got.get('sign-in', { responseType: 'text', headers: html });
    expect((await signInPage()).body).to.contain('<link rel="icon" href="/favicon.ico" />');

    const branding = { favicon, darkFavicon };
    const color = { primaryColor: '#1d4ed8', isDarkModeEnabled: true, darkPrimaryColor: '#93b4ff' };
    expect((await service.api.patch('sign-in-exp', { json: { branding, color } })).statusCode).to.equal(200);
    try {
      const redirect = await service.http.got.get('favicon.ico', { followRedirect: false, responseType: 'text' });
      expect(redirect.statusCode).to.equal(302);
      expect(redirect.headers).to.include({ location: favicon, 'cache-control': 'public, max-age=300' });

      const page = await signInPage();
      expect(page.body).to.contain(`<link rel="icon" href="${favicon}" />`);
      expect(page.body).to.contain(
        '<link rel="icon" href="https://cdn.example.com/acme/favicon-dark.png?v=&quot;2&quot;" media="(prefers-color-scheme: dark)" />',
      );
      expect(page.body).to.not.contain('data:,');
      expect(page.headers['content-security-policy']).to.contain("img-src 'self' data: https://cdn.example.com;");
      // The provider's pages link /favicon.ico, and their CSP lets its redirect to the icon's origin load, no other.
      const error = await authorization({ client_id: 'no-such-app' }, html);
      expect(error.body).to.contain('<link rel="icon" href="/favicon.ico" />');
      expect(error.headers['content-security-policy']).to.contain("img-src 'self' data: https://cdn.example.com;");
    } finally {
      await service.api.patch('sign-in-exp', { json: { branding: {} } });
    }
    expect((await service.http.got.get('favicon.ico', { responseType: 'buffer' })).statusCode).to.equal(200);
  });
});
