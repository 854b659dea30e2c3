import { expect } from 'chai';
import { type BrowserContext, type Page } from 'playwright-core';

import { buildIfStale } from '../support/build.ts';
import {
  launchChromium,
  screenshotAtWidths,
  skipWithoutChromium,
  type TestBrowser,
  viewports,
} from '../support/chromium.ts';
import { openDatabase } from '../support/database.ts';
import { createApplication } from '../support/fixtures.ts';
import { startService, type TestService } from '../support/service.ts';
import { ifSet } from '../support/values.ts';
import { startApplication } from './support.ts';

/**
 * The provider's own pages in a real browser: its error pages (an unknown application, a redirect
 * URI not registered, an expired sign-in) and RP-initiated logout's confirmation and success page,
 * in the hosted pages' look. E2E_SCREENSHOTS=<folder> saves each at laptop and phone width
 * (`hosted-<page>-laptop.png`, `-phone.png`; docs/screenshots/ holds them).
 */

describe("the provider's error and sign-out pages in Chromium", function () {
  this.timeout(60_000);

  let service: TestService;
  let application: Awaited<ReturnType<typeof startApplication>>;
  let clientId: string;
  let browser: TestBrowser;
  let callback: string;
  let signedOut: string;
  const applicationName = 'Acme Notes';
  const user = { username: 'error_pages_user', password: 'Correct-Horse-9' };
  const contexts: BrowserContext[] = [];

  before(async function () {
    skipWithoutChromium(this);
    buildIfStale();
    service = await startService();
    application = await startApplication();
    callback = `${application.origin}/callback`;
    signedOut = `${application.origin}/signed-out`;
    clientId = (
      await createApplication(service, 'SPA', {
        name: applicationName,
        oidcClientMetadata: { redirectUris: [callback], postLogoutRedirectUris: [signedOut] },
      })
    ).id;
    expect((await service.api.post('users', { json: user })).statusCode).to.equal(200);
    browser = await launchChromium();
  });

  after(async () => {
    await Promise.all(contexts.map((context) => context.close()));
    await ifSet(browser)?.close();
    ifSet(application)?.server.close();
    await ifSet(service)?.stop();
  });

  /**
   * A fresh browser profile that reaches only this machine. Every console error is a problem: a
   * blocked style or script (CSP), a resource that failed to load (the favicon's 404 was one).
   */
  async function newPage(): Promise<{ page: Page; problems: string[] }> {
    const context = await browser.newContext({ viewport: viewports.laptop });
    contexts.push(context);
    await context.route(
      (url) => url.hostname !== '127.0.0.1',
      (route) => route.abort(),
    );
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('console', (message) => {
      // An error page's own status (400) is reported as a resource that failed to load: that one is meant.
      if (
        message.type() === 'error' &&
        !(message.text().startsWith('Failed to load resource') && message.location().url === page.url())
      ) {
        problems.push(`console: ${message.text()} (${message.location().url})`);
      }
    });
    return { page, problems };
  }

  const screenshot = (page: Page, name: string) => screenshotAtWidths(page, `hosted-${name}`);

  const authorizationUrl = (extra: Record<string, string> = {}) =>
    `${service.url}/oidc/auth?${new URLSearchParams({
      client_id: clientId,
      redirect_uri: callback,
      response_type: 'code',
      scope: 'openid',
      state: 'st',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
      ...extra,
    })}`;

  /** What every one of these pages shows: our page, styled by the sign-in stylesheet, nothing of the provider's own. */
  async function expectOurPage(page: Page, heading: string) {
    await page.getByRole('heading', { level: 1, name: heading }).waitFor();
    expect(await page.title()).to.equal(heading);
    const text = await page.locator('body').innerText();
    expect(text).not.to.match(/oops|something went wrong/i);
    expect(await page.locator('style, [style], script').count()).to.equal(0);
    // The hosted pages' stylesheet applies: the card is a white, bordered box of the pages' width.
    const card = await page.locator('main.card').evaluate((element) => {
      const style = getComputedStyle(element);
      return { background: style.backgroundColor, maxWidth: style.maxWidth };
    });
    expect(card).to.deep.equal({ background: 'rgb(255, 255, 255)', maxWidth: '416px' });
  }

  it('an unknown client id shows what happened, the code for support and a way back', async () => {
    const { page, problems } = await newPage();
    const response = await page.goto(authorizationUrl({ client_id: 'no-such-application' }));
    expect(response?.status()).to.equal(400);
    expect(response?.headers()['content-security-policy']).to.contain("default-src 'self'");
    await expectOurPage(page, "This application isn't known");
    await page.getByText("The application that sent you here isn't registered with this sign-in service").waitFor();
    await page.getByText('You can close this tab, or go back to the application you came from.').waitFor();
    expect(await page.locator('code').allInnerTexts()).to.deep.equal(['invalid_client', 'no-such-application']);
    await screenshot(page, 'error-unknown-application');
    expect(problems).to.deep.equal([]);
  });

  it('a redirect_uri the application did not register stops the sign-in and links to the application', async () => {
    const { page, problems } = await newPage();
    const response = await page.goto(authorizationUrl({ redirect_uri: 'https://elsewhere.example/steal' }));
    expect(response?.status()).to.equal(400);
    expect(new URL(page.url()).host).to.equal(new URL(service.url).host);
    await expectOurPage(page, "This sign-in link isn't set up correctly");
    await page
      .getByText(`${applicationName} asked to send you back to an address that isn't registered for it`)
      .waitFor();
    const back = page.getByRole('link', { name: `Back to ${applicationName}` });
    // The origin of the address the application registered, never the one asked for.
    expect(await back.getAttribute('href')).to.equal(`${application.origin}/`);
    expect(await page.locator('code').first().innerText()).to.equal('invalid_redirect_uri');
    await screenshot(page, 'error-redirect-uri');
    expect(problems).to.deep.equal([]);
  });

  it('an expired sign-in says to start again from the application', async () => {
    const { page, problems } = await newPage();
    await page.goto(authorizationUrl());
    expect(new URL(page.url()).pathname).to.equal('/sign-in');
    // The page has asked what it shows (the application's name) before the tab is abandoned.
    await page.waitForLoadState('networkidle');
    // The interaction outlives its hour (ttl.Interaction): its row expires, as an abandoned tab's does.
    const db = openDatabase(service.config.dbUrl);
    try {
      expect(
        await db('oidc_model_instances')
          .where({ model_name: 'Interaction' })
          .update({ expires_at: Date.now() - 1000 }),
      ).to.equal(1);
    } finally {
      await db.destroy();
    }
    // Back to where the provider resumes the sign-in (the browser's resume cookie names it).
    const resume = (await page.context().cookies()).find((cookie) => cookie.name === '_interaction_resume');
    expect(resume?.path).to.match(/^\/oidc\/auth\/[\w-]+$/);
    const response = await page.goto(`${service.url}${resume!.path}`);
    expect(response?.status()).to.equal(400);
    await expectOurPage(page, 'This sign-in took too long');
    await page.getByText('Start again from the application you were signing in to.').waitFor();
    expect(await page.locator('code').first().innerText()).to.equal('invalid_request');
    await screenshot(page, 'error-expired-sign-in');
    expect(problems).to.deep.equal([]);
  });

  /** Signs in through the hosted page; the browser lands on the application's callback. */
  async function signIn(page: Page) {
    await page.goto(authorizationUrl());
    await page.getByLabel('Username or email').fill(user.username);
    await page.getByLabel('Password', { exact: true }).fill(user.password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.waitForURL((url) => url.href.startsWith(callback));
  }

  it('sign-out asks "Sign out of <application>?" and signs out back to the application', async () => {
    const { page, problems } = await newPage();
    await signIn(page);

    const response = await page.goto(
      `${service.url}/oidc/session/end?${new URLSearchParams({ client_id: clientId, post_logout_redirect_uri: signedOut })}`,
    );
    expect(response?.status()).to.equal(200);
    await expectOurPage(page, `Sign out of ${applicationName}?`);
    await page.getByRole('button', { name: 'Stay signed in' }).waitFor();
    // The provider's form: it posts to the confirmation with its CSRF token.
    const form = page.locator('form#op\\.logoutForm');
    expect(await form.getAttribute('action')).to.match(/\/oidc\/session\/end\/confirm$/);
    expect(await form.locator('input[name=xsrf]').getAttribute('value')).to.match(/^[\da-f]{48}$/);
    // The confirmation's redirect goes to the application: the page's CSP lets the form end there.
    expect(response?.headers()['content-security-policy']).to.contain(`form-action 'self' ${application.origin};`);
    await screenshot(page, 'sign-out');

    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.waitForURL((url) => url.href.startsWith(signedOut));
    expect(new URL(page.url()).searchParams.get('state')).to.equal(null);

    // Signed out: a new sign-in asks for the password again.
    await page.goto(authorizationUrl());
    expect(new URL(page.url()).pathname).to.equal('/sign-in');
    expect(problems).to.deep.equal([]);
  });

  it('sign-out without an address to return to ends on our "You\'re signed out" page', async () => {
    const { page, problems } = await newPage();
    await signIn(page);
    const signOut = `${service.url}/oidc/session/end?${new URLSearchParams({ client_id: clientId })}`;
    // The same confirmation in an earlier tab: once signed out in the later one, its form has expired.
    const earlier = await page.context().newPage();
    await earlier.goto(signOut);
    await page.goto(signOut);
    await expectOurPage(page, `Sign out of ${applicationName}?`);
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.waitForURL((url) => url.pathname === '/oidc/session/end/success');
    await expectOurPage(page, "You're signed out");
    await page.getByText('You signed out. You can close this tab.').waitFor();
    await screenshot(page, 'signed-out');

    await earlier.getByRole('button', { name: 'Sign out', exact: true }).click();
    await expectOurPage(earlier, 'This sign-out page has expired');
    await earlier.getByText('Nothing was changed. Start signing out again from the application.').waitFor();
    expect(problems).to.deep.equal([]);
  });

  it('serves /favicon.ico: an icon, cached', async () => {
    // A profile without request routing: Chromium fails every /favicon.ico request while Playwright routes.
    const context = await browser.newContext({ viewport: viewports.laptop });
    contexts.push(context);
    const page = await context.newPage();
    const response = await context.request.get(`${service.url}/favicon.ico`);
    expect(response.status()).to.equal(200);
    expect(response.headers()).to.include({ 'content-type': 'image/x-icon', 'cache-control': 'public, max-age=86400' });
    // Chromium decodes it as an image of 32×32, on a page of the service (which names it as its icon).
    await page.goto(authorizationUrl({ client_id: 'no-such-application' }));
    expect(await page.locator('link[rel=icon]').getAttribute('href')).to.equal('/favicon.ico');
    const size = await page.evaluate(async () => {
      const image = new Image();
      image.src = '/favicon.ico';
      await image.decode();
      return [image.naturalWidth, image.naturalHeight];
    });
    expect(size).to.deep.equal([32, 32]);
  });
});
