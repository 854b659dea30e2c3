import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import type { Page } from 'playwright-core';

import { buildIfStale } from '../support/build.ts';
import { launchChromium, skipWithoutChromium, type TestBrowser } from '../support/chromium.ts';
import { createApplication } from '../support/fixtures.ts';
import { startService, type TestService } from '../support/service.ts';
import { ifSet } from '../support/values.ts';

/**
 * The sign-in experience's and an application's logos where development puts them, on a plain
 * http origin of their own, and the pages' icon: what a person sees in Chromium.
 */
const svg = (fill: string) =>
  `<svg xmlns="http://www.w3.org/2000/svg" width="160" height="48"><rect width="160" height="48" rx="8" fill="${fill}"/></svg>`;

/** An image server on 127.0.0.1: another origin than the service's. */
async function startImageServer(): Promise<{ server: Server; origin: string }> {
  const server = createServer((request, response) => {
    response.writeHead(200, { 'content-type': 'image/svg+xml' });
    response.end(svg(request.url === '/app.svg' ? '#7c3aed' : '#0f766e'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** Whether the image `selector` names has loaded (a refused or broken one has no width). */
const imageShown = (page: Page, selector: string) =>
  page.waitForFunction((found) => {
    const image = document.querySelector<HTMLImageElement>(found);
    return image?.complete && image.naturalWidth > 0;
  }, selector);

describe('logos and icons in Chromium', function () {
  this.timeout(90_000);

  let service: TestService;
  let images: Awaited<ReturnType<typeof startImageServer>>;
  let browser: TestBrowser;

  before(async function () {
    skipWithoutChromium(this);
    this.timeout(300_000);
    buildIfStale();
    service = await startService();
    images = await startImageServer();
    browser = await launchChromium();
  });

  after(async () => {
    await ifSet(browser)?.close();
    ifSet(images)?.server.close();
    await ifSet(service)?.stop();
  });

  async function newPage() {
    const context = await browser.newContext();
    const page = await context.newPage();
    const refused: string[] = [];
    page.on('console', (message) => {
      if (/Content.Security.Policy|Refused to/i.test(message.text())) {
        refused.push(message.text());
      }
    });
    return { page, refused };
  }

  it("shows a logo on an http origin: the page's CSP names that origin, not every https: one", async () => {
    const logoUrl = `${images.origin}/logo.svg`;
    expect((await service.api.patch('sign-in-exp', { json: { branding: { logoUrl } } })).statusCode).to.equal(200);
    const callback = 'http://127.0.0.1:9/callback';
    const application = await createApplication(service, 'SPA', {
      name: 'Acme Notes',
      oidcClientMetadata: { redirectUris: [callback], postLogoutRedirectUris: [], logoUri: `${images.origin}/app.svg` },
    });
    try {
      const { page, refused } = await newPage();
      const response = await page.goto(`${service.url}/sign-in`);
      expect(response?.headers()['content-security-policy']).to.contain(`img-src 'self' data: ${images.origin};`);
      expect(response?.headers()['content-security-policy']).to.not.contain('https:');
      await imageShown(page, '#brand-logo');
      expect(await page.locator('#brand-logo').getAttribute('src')).to.equal(logoUrl);

      // Signing in to an application with a logo of its own: that one shows.
      const query = new URLSearchParams({
        client_id: application.id,
        redirect_uri: callback,
        response_type: 'code',
        scope: 'openid',
        code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        code_challenge_method: 'S256',
      });
      await page.goto(`${service.url}/oidc/auth?${query}`);
      await page.getByText('Sign in to Acme Notes').waitFor();
      expect(await page.locator('#brand-logo').getAttribute('src')).to.equal(`${images.origin}/app.svg`);
      await imageShown(page, '#brand-logo');
      expect(refused).to.deep.equal([]);
    } finally {
      await service.api.patch('sign-in-exp', { json: { branding: {} } });
    }
  });

  it("links a real icon on the sign-in pages, the provider pages and the console: ours, or the brand's", async () => {
    const { page } = await newPage();
    const iconOf = async (path: string) => {
      await page.goto(`${service.url}/${path}`);
      const href = await page.locator('link[rel="icon"]').first().getAttribute('href');
      expect(href, path)
        .to.be.a('string')
        .and.not.match(/^data:/);
      // What the browser gets for it: an image, whatever redirect it follows.
      return page.evaluate(async (url) => {
        const icon = await fetch(url);
        return {
          status: icon.status,
          type: icon.headers.get('content-type'),
          size: (await icon.arrayBuffer()).byteLength,
        };
      }, new URL(href!, page.url()).href);
    };
    for (const path of ['sign-in', 'register', 'console', 'oidc/auth?client_id=no-such-app']) {
      const icon = await iconOf(path);
      expect(icon, path).to.include({ status: 200, type: 'image/x-icon' });
      expect(icon.size, path).to.be.greaterThan(100);
    }

    const favicon = `${images.origin}/favicon.svg`;
    expect((await service.api.patch('sign-in-exp', { json: { branding: { favicon } } })).statusCode).to.equal(200);
    try {
      expect(
        await page.goto(`${service.url}/sign-in`).then(() => page.locator('link[rel="icon"]').getAttribute('href')),
      ).to.equal(favicon);
      // Another origin's: the page's own fetch would be a cross-origin request, the icon's load is not.
      expect((await fetch(favicon)).headers.get('content-type')).to.equal('image/svg+xml');
    } finally {
      await service.api.patch('sign-in-exp', { json: { branding: {} } });
    }
  });
});
