import { createHash, randomBytes } from 'node:crypto';
import { expect } from 'chai';
import type { BrowserContext } from 'playwright-core';

import { buildIfStale } from '../support/build.ts';
import { launchChromium, screenshotAtWidths, skipWithoutChromium, type TestBrowser } from '../support/chromium.ts';
import { type DocumentServer, startDocumentServer } from '../support/document-server.ts';
import { startService, type TestService } from '../support/service.ts';
import { ifSet } from '../support/values.ts';
import { startApplication } from './support.ts';

const logoUrl = 'https://agent.example/logo.svg';
const logo =
  '<svg xmlns="http://www.w3.org/2000/svg" width="160" height="48"><rect width="160" height="48" rx="8" fill="#b91c1c"/></svg>';

/**
 * A client named by a URL (Client ID Metadata Documents) in Chromium: the sign-in and consent pages
 * name it as its document does, with its logo, and say in bold which host sent the person, so that a name
 * borrowed from someone else does not pass for theirs. E2E_SCREENSHOTS=<folder> saves screenshots.
 */
describe('Client ID Metadata Documents: the sign-in and consent pages in Chromium', function () {
  this.timeout(90_000);

  let service: TestService;
  let documents: DocumentServer;
  let application: Awaited<ReturnType<typeof startApplication>>;
  let browser: TestBrowser;
  let context: BrowserContext | undefined;

  before(async function () {
    skipWithoutChromium(this);
    buildIfStale();
    documents = await startDocumentServer();
    service = await startService({
      env: { CLIENT_ID_METADATA_DOCUMENTS: 'true', CLIENT_ID_METADATA_DOCUMENT_HOSTS: 'localhost' },
    });
    application = await startApplication();
    browser = await launchChromium();
  });

  after(async () => {
    await context?.close();
    await ifSet(browser)?.close();
    ifSet(application)?.server.close();
    await ifSet(service)?.stop();
    await ifSet(documents)?.close();
  });

  it('shows the name, the logo and the host of the client id on sign-in and consent; Allow sends a code', async () => {
    const callback = `${application.origin}/callback`;
    const clientId = documents.url('/mcp/client.json');
    // A name that borrows another's: the host says who it is.
    documents.serve('/mcp/client.json', {
      body: { client_id: clientId, client_name: 'Acme Notes', logo_uri: logoUrl, redirect_uris: [callback] },
    });
    await service.api.post('users', { json: { username: 'mira', password: 'Correct-Horse-9', name: 'Mira' } });

    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    await context.route(
      (url) => url.hostname !== '127.0.0.1',
      (route) =>
        route.request().url() === logoUrl ? route.fulfill({ contentType: 'image/svg+xml', body: logo }) : route.abort(),
    );
    const page = await context.newPage();
    const verifier = randomBytes(32).toString('base64url');
    const query = new URLSearchParams({
      client_id: clientId,
      redirect_uri: callback,
      response_type: 'code',
      scope: 'openid profile',
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    });
    await page.goto(`${service.url}/oidc/auth?${query}`);
    await page.locator('#sign-in-to').getByText('Sign in to Acme Notes').waitFor();
    expect(await page.locator('#brand-logo').getAttribute('src')).to.equal(logoUrl);
    // The sign-in page's header shows the host beside the name too.
    const host = new URL(clientId).host;
    expect(await page.locator('#sign-in-host strong').textContent()).to.equal(`Sent by ${host}`);
    await screenshotAtWidths(page, 'sign-in-client-id-metadata-document');
    await page.getByLabel('Username or email').fill('mira');
    await page.getByLabel('Password', { exact: true }).fill('Correct-Horse-9');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();

    await page.waitForURL((url) => url.pathname === '/consent');
    await page.getByText('Acme Notes wants to access your account.').waitFor();
    expect(await page.locator('#consent-host strong').textContent()).to.equal(
      `Sent by ${host}: allow only if you trust this site.`,
    );
    await screenshotAtWidths(page, 'consent-client-id-metadata-document');
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.waitForURL((url) => url.href.startsWith(callback));
    expect(new URL(page.url()).searchParams.get('code')).to.be.a('string');
  });

  for (const [language, sentBy] of [
    ['de', 'Gesendet von'],
    ['fr', 'Envoyé par'],
  ]) {
    it(`says which host sent the person in ${language} on the sign-in page (ui_locales)`, async () => {
      const callback = `${application.origin}/callback`;
      const clientId = documents.url(`/mcp-${language}/client.json`);
      documents.serve(`/mcp-${language}/client.json`, {
        body: { client_id: clientId, client_name: 'Acme Notes', redirect_uris: [callback] },
      });
      const localized = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      try {
        const page = await localized.newPage();
        const query = new URLSearchParams({
          client_id: clientId,
          redirect_uri: callback,
          response_type: 'code',
          scope: 'openid',
          code_challenge: createHash('sha256').update(randomBytes(32)).digest('base64url'),
          code_challenge_method: 'S256',
          ui_locales: language,
        });
        await page.goto(`${service.url}/oidc/auth?${query}`);
        await page.locator('#sign-in-host').waitFor();
        expect(await page.locator('#sign-in-host strong').textContent()).to.equal(
          `${sentBy} ${new URL(clientId).host}`,
        );
      } finally {
        await localized.close();
      }
    });
  }
});
