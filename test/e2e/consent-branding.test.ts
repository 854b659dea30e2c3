import { createHash, randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { type BrowserContext, type Page } from 'playwright-core';

import { buildIfStale } from '../support/build.ts';
import { launchChromium, screenshotAtWidths, skipWithoutChromium, type TestBrowser } from '../support/chromium.ts';
import { createApplication, defaultSecretOf } from '../support/fixtures.ts';
import { startService, type TestService } from '../support/service.ts';
import { ifSet } from '../support/values.ts';
import { startApplication } from './support.ts';

/**
 * The consent page and the sign-in experience's branding in Chromium: a third-party application is
 * shown to the person, who allows (the application gets a code, the grant is listed and revocable
 * in the Account API) or cancels (the application gets access_denied); the pages wear the primary
 * colour and the logo, and name the application.
 *
 * E2E_SCREENSHOTS=<folder> saves screenshots at laptop and phone widths.
 */
const logoUrl = 'https://logo.example/logo.svg';
const appLogoUrl = 'https://logo.example/app.svg';
const svg = (fill: string, text: string) =>
  `<svg xmlns="http://www.w3.org/2000/svg" width="160" height="48"><rect width="160" height="48" rx="8" fill="${fill}"/><text x="80" y="31" font-family="sans-serif" font-size="18" fill="#fff" text-anchor="middle">${text}</text></svg>`;

describe('consent and branding in Chromium', function () {
  this.timeout(90_000);

  let service: TestService;
  let application: Awaited<ReturnType<typeof startApplication>>;
  let browser: TestBrowser;
  let callback: string;
  let thirdPartyId: string;
  let firstPartyId: string;
  const contexts: BrowserContext[] = [];
  const password = 'Correct-Horse-9';

  before(async function () {
    skipWithoutChromium(this);
    buildIfStale();
    service = await startService();
    application = await startApplication();
    callback = `${application.origin}/callback`;
    thirdPartyId = (
      await createApplication(service, 'Traditional', {
        name: 'Photo Printer',
        isThirdParty: true,
        oidcClientMetadata: { redirectUris: [callback], postLogoutRedirectUris: [], logoUri: appLogoUrl },
      })
    ).id;
    // What its consent page may ask for: without these, a third party is granted only `openid`.
    const consentScopes = await service.api.post(`applications/${thirdPartyId}/user-consent-scopes`, {
      json: { userScopes: ['profile', 'email', 'urn:logto:scope:organizations'] },
    });
    expect(consentScopes.statusCode, JSON.stringify(consentScopes.body)).to.equal(201);
    firstPartyId = (
      await createApplication(service, 'SPA', {
        name: 'Acme Notes',
        oidcClientMetadata: { redirectUris: [callback], postLogoutRedirectUris: [] },
      })
    ).id;
    const settings = await service.api.patch('sign-in-exp', {
      json: {
        color: { primaryColor: '#0f766e', isDarkModeEnabled: false, darkPrimaryColor: '#5eead4' },
        branding: { logoUrl },
        termsOfUseUrl: 'https://acme.example/terms',
        privacyPolicyUrl: 'https://acme.example/privacy',
      },
    });
    expect(settings.statusCode, JSON.stringify(settings.body)).to.equal(200);
    browser = await launchChromium();
  });

  after(async () => {
    await Promise.all(contexts.map((context) => context.close()));
    await ifSet(browser)?.close();
    ifSet(application)?.server.close();
    await ifSet(service)?.stop();
  });

  async function newPage(
    viewport = { width: 1280, height: 800 },
    locale?: string,
  ): Promise<{ page: Page; problems: string[] }> {
    const context = await browser.newContext({ viewport, locale });
    contexts.push(context);
    // The logos are "remote" HTTPS images, answered here; nothing else leaves 127.0.0.1.
    await context.route(
      (url) => url.hostname !== '127.0.0.1',
      (route) =>
        route.request().url() === logoUrl
          ? route.fulfill({ contentType: 'image/svg+xml', body: svg('#0f766e', 'ACME') })
          : route.request().url() === appLogoUrl
            ? route.fulfill({ contentType: 'image/svg+xml', body: svg('#7c3aed', 'PRINTER') })
            : route.abort(),
    );
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('console', (message) => {
      if (message.type() === 'error' && /Content.Security.Policy|Refused to/i.test(message.text())) {
        problems.push(`console: ${message.text()}`);
      }
    });
    return { page, problems };
  }

  function authorization(clientId: string, extra: Record<string, string> = {}) {
    const verifier = randomBytes(32).toString('base64url');
    const state = randomBytes(8).toString('hex');
    const query = new URLSearchParams({
      client_id: clientId,
      redirect_uri: callback,
      response_type: 'code',
      scope: 'openid profile email',
      state,
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
      ...extra,
    });
    return { url: `${service.url}/oidc/auth?${query}`, verifier, state };
  }

  async function signIn(page: Page, username: string) {
    await page.getByLabel('Username or email').fill(username);
    await page.getByLabel('Password', { exact: true }).fill(password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  }

  it('names the application and wears the primary colour, the logo and the legal links', async () => {
    const { page, problems } = await newPage();
    await page.goto(authorization(firstPartyId).url);
    await page.locator('#sign-in-to').getByText('Sign in to Acme Notes').waitFor();
    expect(await page.locator('#brand-logo').getAttribute('src')).to.equal(logoUrl);
    await page.waitForFunction(() => {
      const image = document.querySelector<HTMLImageElement>('#brand-logo');
      return image?.complete && image.naturalWidth > 0;
    });
    const button = page.getByRole('button', { name: 'Sign in', exact: true });
    await page.waitForFunction(
      () => getComputedStyle(document.querySelector('button.primary')!).backgroundColor === 'rgb(15, 118, 110)',
    );
    expect(await button.evaluate((element) => getComputedStyle(element).backgroundColor)).to.equal('rgb(15, 118, 110)');
    expect(await page.locator('#terms-link').getAttribute('href')).to.equal('https://acme.example/terms');
    expect(await page.locator('#privacy-link').getAttribute('href')).to.equal('https://acme.example/privacy');
    await screenshotAtWidths(page, 'branding-sign-in');
    expect(problems).to.deep.equal([]);
  });

  it('a third-party application: the consent page lists what it asks; allowing gives it a code and a revocable grant', async () => {
    const username = 'consenting';
    const user = await service.api.post('users', { json: { username, password, name: 'Con Senting' } });
    expect(user.statusCode).to.equal(200);
    const { page, problems } = await newPage();
    const first = authorization(thirdPartyId);
    await page.goto(first.url);
    await page.locator('#sign-in-to').getByText('Sign in to Photo Printer').waitFor();
    // The application's own logo wins over the sign-in experience's.
    expect(await page.locator('#brand-logo').getAttribute('src')).to.equal(appLogoUrl);
    await signIn(page, username);

    await page.waitForURL((url) => url.pathname === '/consent');
    await page.getByText('Photo Printer wants to access your account.').waitFor();
    await page.getByText('You are signed in as Con Senting.').waitFor();
    expect(await page.locator('#consent-scopes li').allTextContents()).to.deep.equal([
      'See your name, username and picture',
      'See your email address',
    ]);
    await screenshotAtWidths(page, 'consent');
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.waitForURL((url) => url.href.startsWith(callback));
    const landed = new URL(page.url());
    expect(landed.searchParams.get('state')).to.equal(first.state);
    const tokens = await service.http.post('oidc/token', {
      form: {
        grant_type: 'authorization_code',
        code: landed.searchParams.get('code')!,
        code_verifier: first.verifier,
        redirect_uri: callback,
      },
      headers: {
        authorization: `Basic ${Buffer.from(`${thirdPartyId}:${await secretOf(thirdPartyId)}`).toString('base64')}`,
      },
    });
    expect(tokens.statusCode, JSON.stringify(tokens.body)).to.equal(200);
    expect(tokens.body.scope.split(' ').sort()).to.deep.equal(['email', 'openid', 'profile']);

    // The grant, as admins see it; the application's own token reads the account but changes nothing.
    const bearer = { authorization: `Bearer ${tokens.body.access_token}` };
    const grants = (await service.api.get(`users/${user.body.id}/grants`)).body.grants as Array<{
      id: string;
      payload: Record<string, unknown>;
    }>;
    expect(grants).to.have.length(1);
    expect(grants[0].payload).to.include({ clientId: thirdPartyId, accountId: user.body.id, kind: 'Grant' });
    const grantId = grants[0].id;
    expect((await service.http.get('api/my-account', { headers: bearer })).statusCode).to.equal(200);
    for (const refused of [
      await service.http.post('api/verifications/password', { headers: bearer, json: { password } }),
      await service.http.delete(`api/my-account/grants/${grantId}`, { headers: bearer }),
    ]) {
      expect(refused.statusCode).to.equal(403);
      expect(refused.body.code).to.equal('auth.third_party_application_forbidden');
    }

    // Again, while the grant stands: no consent page, straight back with a code.
    const again = authorization(thirdPartyId);
    await page.goto(again.url);
    await page.waitForURL((url) => url.href.startsWith(callback));
    expect(new URL(page.url()).searchParams.get('code')).to.be.a('string');

    // Revoked, the grant is gone and consent is asked again.
    expect((await service.api.delete(`users/${user.body.id}/grants/${grantId}`)).statusCode).to.equal(204);
    expect((await service.api.get(`users/${user.body.id}/grants`)).body.grants).to.deep.equal([]);
    await page.goto(authorization(thirdPartyId).url);
    await page.waitForURL((url) => url.pathname === '/consent');
    await page.getByText('Photo Printer wants to access your account.').waitFor();
    expect(problems).to.deep.equal([]);
  });

  it('the consent page names the API and its permissions by description, and "stay signed in", in German', async () => {
    const username = 'api_reader';
    const user = await service.api.post('users', { json: { username, password, name: 'Api Leser' } });
    const resource = await service.api.post('resources', {
      json: { name: 'Photo Library', indicator: 'https://photos.example.com' },
    });
    const scopes = [];
    for (const [name, description] of [
      ['read:photos', 'Fotos ansehen'],
      ['print:photos', 'Fotos drucken'],
    ]) {
      scopes.push(
        (await service.api.post(`resources/${resource.body.id}/scopes`, { json: { name, description } })).body.id,
      );
    }
    const role = await service.api.post('roles', {
      json: { name: 'photo-reader', description: 'Reads and prints photos', scopeIds: scopes },
    });
    await service.api.post(`applications/${thirdPartyId}/user-consent-scopes`, { json: { resourceScopes: scopes } });
    await service.api.post(`users/${user.body.id}/roles`, { json: { roleIds: [role.body.id] } });

    const { page, problems } = await newPage(undefined, 'de-DE');
    await page.goto(
      authorization(thirdPartyId, {
        scope: 'openid profile offline_access read:photos print:photos',
        resource: 'https://photos.example.com',
        prompt: 'consent',
      }).url,
    );
    await page.getByLabel('Benutzername oder E-Mail').fill(username);
    await page.getByLabel('Passwort', { exact: true }).fill(password);
    await page.getByRole('button', { name: 'Anmelden', exact: true }).click();
    await page.waitForURL((url) => url.pathname === '/consent');
    await page.getByText('Photo Printer möchte auf Ihr Konto zugreifen.').waitFor();
    expect(await page.locator('#consent-scopes li').allTextContents()).to.deep.equal([
      'Ihren Namen, Benutzernamen und Ihr Bild sehen',
      'Angemeldet bleiben: auch in Ihrer Abwesenheit Zugriff behalten',
    ]);
    const api = page.getByRole('region', { name: 'Photo Library' });
    await api.getByText('Zugriff auf Photo Library:').waitFor();
    expect(await api.locator('li').allTextContents()).to.deep.equal([
      'Fotos ansehenread:photos',
      'Fotos druckenprint:photos',
    ]);
    await screenshotAtWidths(page, 'consent-api-de');
    expect(problems).to.deep.equal([]);
  });

  it('a third-party application asking for organizations: the consent page names them, userinfo gives their ids', async () => {
    const username = 'member';
    const user = await service.api.post('users', { json: { username, password, name: 'Mem Ber' } });
    const organization = await service.api.post('organizations', { json: { name: 'Acme Printing Co-op' } });
    expect(organization.statusCode).to.equal(201);
    const joined = await service.api.post(`organizations/${organization.body.id}/users`, {
      json: { userIds: [user.body.id] },
    });
    expect(joined.statusCode).to.equal(201);
    const { page, problems } = await newPage();
    const first = authorization(thirdPartyId, { scope: 'openid profile urn:logto:scope:organizations' });
    await page.goto(first.url);
    await signIn(page, username);
    await page.waitForURL((url) => url.pathname === '/consent');
    await page.getByText('Photo Printer wants to access your account.').waitFor();
    expect(await page.locator('#consent-scopes li').allTextContents()).to.deep.equal([
      'See your name, username and picture',
      'See the organizations you belong to',
    ]);
    expect(await page.locator('#consent-organizations li').allTextContents()).to.deep.equal(['Acme Printing Co-op']);
    await screenshotAtWidths(page, 'consent-organizations');
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.waitForURL((url) => url.href.startsWith(callback));
    const tokens = await service.http.post('oidc/token', {
      form: {
        grant_type: 'authorization_code',
        code: new URL(page.url()).searchParams.get('code')!,
        code_verifier: first.verifier,
        redirect_uri: callback,
      },
      headers: {
        authorization: `Basic ${Buffer.from(`${thirdPartyId}:${await secretOf(thirdPartyId)}`).toString('base64')}`,
      },
    });
    expect(tokens.statusCode, JSON.stringify(tokens.body)).to.equal(200);
    const me = await service.http.get('oidc/me', { headers: { authorization: `Bearer ${tokens.body.access_token}` } });
    expect(me.body).to.deep.include({ sub: user.body.id, organizations: [organization.body.id] });
    expect(problems).to.deep.equal([]);
  });

  it('a third-party application: cancelling sends it access_denied and records no grant', async () => {
    const username = 'refusing';
    const user = await service.api.post('users', { json: { username, password } });
    const { page, problems } = await newPage({ width: 390, height: 844 });
    const first = authorization(thirdPartyId);
    await page.goto(first.url);
    await signIn(page, username);
    await page.waitForURL((url) => url.pathname === '/consent');
    await page.getByRole('button', { name: 'Cancel' }).click();
    await page.waitForURL((url) => url.href.startsWith(callback));
    const landed = new URL(page.url());
    expect(landed.searchParams.get('error')).to.equal('access_denied');
    expect(landed.searchParams.get('state')).to.equal(first.state);
    expect(landed.searchParams.get('code')).to.equal(null);
    expect((await service.api.get(`users/${user.body.id}/grants`)).body.grants).to.deep.equal([]);
    expect(problems).to.deep.equal([]);
  });

  it("a first-party application is consented to on the person's behalf, with prompt=consent too (as Logto)", async () => {
    const username = 'firstparty';
    await service.api.post('users', { json: { username, password } });
    const { page } = await newPage();
    await page.goto(authorization(firstPartyId).url);
    await signIn(page, username);
    await page.waitForURL((url) => url.href.startsWith(callback));
    expect(new URL(page.url()).searchParams.get('code')).to.be.a('string');

    // Signed in already, prompt=consent (which Logto's SDK always sends): straight back, no page.
    await page.goto(authorization(firstPartyId, { prompt: 'consent' }).url);
    await page.waitForURL((url) => url.href.startsWith(callback));
    expect(new URL(page.url()).searchParams.get('code')).to.be.a('string');
  });

  const secretOf = (id: string) => defaultSecretOf(service, id);
});
