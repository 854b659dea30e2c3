import { createHash, randomBytes } from 'node:crypto';
import { join } from 'node:path';

import { expect } from 'chai';
import { type Browser, type Page } from 'playwright-core';

import { createUser } from '../experience/experience-helpers.ts';
import { buildOnce } from '../support/build.ts';
import { launchChromium, skipWithoutChromium } from '../support/chromium.ts';
import { createApplication } from '../support/fixtures.ts';
import { freePort, startService, type TestService } from '../support/service.ts';
import { ifSet } from '../support/values.ts';
import { startApplication } from './support.ts';

/**
 * Passkeys on the hosted pages in Chromium with its virtual authenticator (DevTools protocol
 * `WebAuthn.addVirtualAuthenticator`): "Add a passkey" when the MFA policy asks, then "Use a
 * passkey" at the next sign-in. The service's ENDPOINT is http://localhost:<port>: a relying party
 * id is a host name, never an IP address.
 *
 * E2E_SCREENSHOTS=<folder> also saves the two steps at laptop and phone width (docs/screenshots/).
 */
const screenshots = process.env.E2E_SCREENSHOTS;

async function screenshot(page: Page, name: string): Promise<void> {
  if (!screenshots) {
    return;
  }
  for (const [width, height, label] of [
    [390, 760, 'phone'],
    [1280, 800, 'laptop'],
  ] as const) {
    await page.setViewportSize({ width, height });
    await page.screenshot({ path: join(screenshots, `${name}-${label}.png`), fullPage: true });
  }
}
const password = 'Granite-Kestrel-64';

describe('passkeys on the hosted pages in Chromium', function () {
  this.timeout(60_000);

  let service: TestService;
  let application: Awaited<ReturnType<typeof startApplication>>;
  let browser: Browser;
  let clientId: string;
  let endpoint: string;

  before(async function () {
    skipWithoutChromium(this);
    buildOnce('sign-in');
    const port = await freePort();
    endpoint = `http://localhost:${port}`;
    service = await startService({ port, env: { ENDPOINT: endpoint } });
    application = await startApplication();
    clientId = (
      await createApplication(service, 'SPA', {
        oidcClientMetadata: { redirectUris: [`${application.origin}/callback`], postLogoutRedirectUris: [] },
      })
    ).id;
    const mfa = { factors: ['WebAuthn', 'Totp'], policy: 'UserControlled' };
    expect((await service.api.patch('sign-in-exp', { json: { mfa } })).statusCode).to.equal(200);
    browser = await launchChromium();
  });

  after(async () => {
    await ifSet(browser)?.close();
    ifSet(application)?.server.close();
    await ifSet(service)?.stop();
  });

  /** Starts a sign-in at the provider (PKCE), as the application would, and signs in with the password. */
  async function signInWithPassword(page: Page, username: string): Promise<void> {
    const verifier = randomBytes(32).toString('base64url');
    const query = new URLSearchParams({
      client_id: clientId,
      redirect_uri: `${application.origin}/callback`,
      response_type: 'code',
      scope: 'openid',
      state: randomBytes(8).toString('hex'),
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    });
    await page.goto(`${endpoint}/oidc/auth?${query}`);
    await page.getByLabel('Username or email').fill(username);
    await page.getByLabel('Password', { exact: true }).fill(password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  }

  const landed = (page: Page) => page.waitForURL((url) => url.href.startsWith(`${application.origin}/callback?code=`));

  it('adds a passkey when the policy asks, then signs in with it; the factor is stored on the account', async () => {
    const username = 'passkey_e2e';
    const user = await createUser(service, { username, password });
    const context = await browser.newContext();
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));

    const devtools = await context.newCDPSession(page);
    await devtools.send('WebAuthn.enable');
    const { authenticatorId } = await devtools.send('WebAuthn.addVirtualAuthenticator', {
      options: {
        protocol: 'ctap2',
        transport: 'internal',
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
        automaticPresenceSimulation: true,
      },
    });

    await signInWithPassword(page, username);
    await page.getByRole('heading', { name: 'Add a passkey' }).waitFor();
    // An authenticator app may be chosen instead; the step may be declined (UserControlled).
    await page.getByRole('button', { name: 'Use an authenticator app instead' }).waitFor();
    await page.getByRole('button', { name: 'Not now' }).waitFor();
    await screenshot(page, 'hosted-passkey-add');
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await landed(page);

    const { credentials } = await devtools.send('WebAuthn.getCredentials', { authenticatorId });
    expect(credentials).to.have.length(1);
    const factors = await service.api.get(`users/${user.id}/mfa-verifications`);
    expect((factors.body as Array<{ type: string }>).map((factor) => factor.type)).to.deep.equal(['WebAuthn']);

    // A new sign-in (no session): the passkey is asked for, and the authenticator answers.
    await context.clearCookies();
    await signInWithPassword(page, username);
    await page.getByRole('heading', { name: 'Use your passkey' }).waitFor();
    await screenshot(page, 'hosted-passkey-use');
    await page.getByRole('button', { name: 'Use a passkey' }).click();
    await landed(page);
    const used = await devtools.send('WebAuthn.getCredentials', { authenticatorId });
    expect(used.credentials[0].signCount).to.be.greaterThan(credentials[0].signCount);
    expect(problems).to.deep.equal([]);
    await context.close();
  });
});
