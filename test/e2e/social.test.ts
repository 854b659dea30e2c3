import { createHash, randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { decodeJwt } from 'jose';

import { buildIfStale } from '../support/build.ts';
import { launchChromium, skipWithoutChromium, type TestBrowser } from '../support/chromium.ts';
import { createApplication } from '../support/fixtures.ts';
import { freePort, startService, type TestService } from '../support/service.ts';
import { startStandInIssuer } from '../support/stand-in-idp.ts';
import { ifSet } from '../support/values.ts';
import { startApplication } from './support.ts';

/**
 * "Continue with ..." in a real browser: the hosted sign-in page sends the browser to another
 * identity provider (a second instance of this service), which sends it back to /callback/<id>,
 * where the page registers the new user and returns to the application.
 */
describe('hosted sign-in pages in Chromium: social sign-in', function () {
  this.timeout(60_000);

  let service: TestService;
  let idp: TestService;
  let browser: TestBrowser;
  let application: Awaited<ReturnType<typeof startApplication>>;

  before(async function () {
    skipWithoutChromium(this);
    buildIfStale();
    service = await startService();
    // Cookies do not tell ports apart: the IdP answers on another host name, so the two services'
    // interaction cookies stay apart in the browser.
    const idpPort = await freePort();
    idp = await startService({ port: idpPort, env: { ENDPOINT: `http://localhost:${idpPort}` } });
    application = await startApplication();
    browser = await launchChromium();
  });

  after(async () => {
    await ifSet(browser)?.close();
    ifSet(application)?.server.close();
    await Promise.all([ifSet(service)?.stop(), ifSet(idp)?.stop()]);
  });

  it('registers through an OpenID Connect provider and comes back to the application signed in', async () => {
    const connectorId = 'e2e-idp';
    const upstream = await createApplication(idp, 'Traditional', {
      oidcClientMetadata: {
        redirectUris: [`${service.config.endpoint}/callback/${connectorId}`],
        postLogoutRedirectUris: [],
      },
    });
    const connector = await service.api.post('connectors', {
      json: {
        id: connectorId,
        connectorId: 'oidc',
        metadata: { target: 'e2e-idp', name: { en: 'Test IdP' } },
        config: { issuer: `${idp.config.endpoint}/oidc`, clientId: upstream.id, clientSecret: upstream.secret },
      },
    });
    expect(connector.statusCode, JSON.stringify(connector.body)).to.equal(200);
    const user = await idp.api.post('users', {
      json: { username: 'erin', password: 'Silver-Lantern-42', primaryEmail: 'erin@example.org', name: 'Erin' },
    });
    expect(user.statusCode, JSON.stringify(user.body)).to.equal(200);

    const callback = `${application.origin}/callback`;
    const spa = await createApplication(service, 'SPA', {
      oidcClientMetadata: { redirectUris: [callback], postLogoutRedirectUris: [] },
    });
    const verifier = randomBytes(32).toString('base64url');
    const query = new URLSearchParams({
      client_id: spa.id,
      redirect_uri: callback,
      response_type: 'code',
      scope: 'openid profile email',
      state: 'app-state',
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    });

    const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
    await context.route(
      (url) => url.hostname !== '127.0.0.1' && url.hostname !== 'localhost',
      (route) => route.abort(),
    );
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    // The Experience API answers 404 user.identity_not_exist for a new identity (Logto's protocol),
    // which Chromium logs as a failed load: only other errors, and 5xx answers, are problems.
    page.on('console', (message) => {
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) {
        problems.push(`console: ${message.text()}`);
      }
    });
    page.on('response', (response) => {
      if (response.status() >= 500) {
        problems.push(`${response.status()} ${response.url()}`);
      }
    });

    await page.goto(`${service.url}/oidc/auth?${query}`);
    await page.getByRole('button', { name: 'Continue with Test IdP' }).click();

    // The IdP's own sign-in page.
    await page.waitForURL((url) => url.host === new URL(idp.config.endpoint).host);
    await page.getByLabel('Username or email').fill('erin');
    await page.getByLabel('Password', { exact: true }).fill('Silver-Lantern-42');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();

    // Back through /callback/<id>: a new account, then the application.
    await page.waitForURL((url) => url.href.startsWith(callback), { timeout: 20_000 });
    const landed = new URL(page.url());
    expect(landed.searchParams.get('state')).to.equal('app-state');
    const tokens = await service.http.post('oidc/token', {
      form: {
        grant_type: 'authorization_code',
        code: landed.searchParams.get('code')!,
        code_verifier: verifier,
        client_id: spa.id,
        redirect_uri: callback,
      },
    });
    expect(tokens.statusCode, JSON.stringify(tokens.body)).to.equal(200);
    const sub = decodeJwt(tokens.body.id_token).sub!;
    const created = await service.api.get(`users/${sub}`);
    expect(created.body).to.include({ primaryEmail: 'erin@example.org', name: 'Erin' });
    expect(created.body.identities['e2e-idp'].userId).to.equal(user.body.id);
    expect(problems).to.deep.equal([]);
    await context.close();
  });

  /** An application's sign-in request, opened in a fresh browser context that reaches only this machine. */
  async function openSignIn() {
    const spa = await createApplication(service, 'SPA', {
      oidcClientMetadata: { redirectUris: [`${application.origin}/callback`], postLogoutRedirectUris: [] },
    });
    const query = new URLSearchParams({
      client_id: spa.id,
      redirect_uri: `${application.origin}/callback`,
      response_type: 'code',
      scope: 'openid',
      state: 'app-state',
      code_challenge: createHash('sha256').update(randomBytes(32).toString('base64url')).digest('base64url'),
      code_challenge_method: 'S256',
    });
    const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
    await context.route(
      (url) => url.hostname !== '127.0.0.1' && url.hostname !== 'localhost',
      (route) => route.abort(),
    );
    const page = await context.newPage();
    await page.goto(`${service.url}/oidc/auth?${query}`);
    return { context, page };
  }

  const technicalWords = /TypeError|fetch failed|ECONNREFUSED|invalid_client|discovery/;

  it('a connector whose IdP does not answer: the sign-in page says so in a sentence, not `TypeError: fetch failed`', async () => {
    // The IdP answered when the connector was saved (it must), and has gone away since.
    const down = await startStandInIssuer();
    const connector = await service.api.post('connectors', {
      json: {
        id: 'e2e-down',
        connectorId: 'oidc',
        metadata: { target: 'e2e-down', name: { en: 'Down IdP' } },
        config: {
          issuer: down.issuer,
          clientId: 'client',
          clientSecret: 'a-secret-of-the-down-idp',
        },
      },
    });
    expect(connector.statusCode, JSON.stringify(connector.body)).to.equal(200);
    await down.close();
    const { context, page } = await openSignIn();
    await page.getByRole('button', { name: 'Continue with Down IdP' }).click();
    const alert = page.getByText(
      'Signing in with this provider is not available right now. Try again later, or sign in another way.',
    );
    await alert.waitFor();
    expect(await page.locator('body').innerText()).to.not.match(technicalWords);
    await context.close();
  });

  it('an IdP that refuses the connector (wrong client secret): the callback page says so in a sentence, with a way back', async () => {
    const connectorId = 'e2e-refused';
    const upstream = await createApplication(idp, 'Traditional', {
      oidcClientMetadata: {
        redirectUris: [`${service.config.endpoint}/callback/${connectorId}`],
        postLogoutRedirectUris: [],
      },
    });
    const connector = await service.api.post('connectors', {
      json: {
        id: connectorId,
        connectorId: 'oidc',
        metadata: { target: connectorId, name: { en: 'Refusing IdP' } },
        config: {
          issuer: `${idp.config.endpoint}/oidc`,
          clientId: upstream.id,
          clientSecret: 'not-the-client-secret-0000',
        },
      },
    });
    expect(connector.statusCode, JSON.stringify(connector.body)).to.equal(200);
    const user = await idp.api.post('users', {
      json: { username: 'rory', password: 'Silver-Lantern-42', primaryEmail: 'rory@example.org' },
    });
    expect(user.statusCode, JSON.stringify(user.body)).to.equal(200);

    const { context, page } = await openSignIn();
    await page.getByRole('button', { name: 'Continue with Refusing IdP' }).click();
    await page.waitForURL((url) => url.host === new URL(idp.config.endpoint).host);
    await page.getByLabel('Username or email').fill('rory');
    await page.getByLabel('Password', { exact: true }).fill('Silver-Lantern-42');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();

    await page.waitForURL((url) => url.pathname === `/callback/${connectorId}`);
    await page
      .getByText('The identity provider did not confirm the sign-in. Try again, or sign in another way.')
      .waitFor();
    expect(await page.locator('body').innerText()).to.not.match(technicalWords);
    expect(await page.getByRole('link', { name: 'Back to sign-in' }).getAttribute('href')).to.equal('/sign-in');
    await context.close();
  });
});
