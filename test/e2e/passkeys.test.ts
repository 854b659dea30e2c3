import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { type BrowserContext, type Page } from 'playwright-core';

import { createUser } from '../experience/experience-helpers.ts';
import { buildIfStale } from '../support/build.ts';
import { launchChromium, screenshotAtWidths, skipWithoutChromium, type TestBrowser } from '../support/chromium.ts';
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

const password = 'Granite-Kestrel-64';

describe('passkeys on the hosted pages in Chromium', function () {
  this.timeout(60_000);

  let service: TestService;
  let application: Awaited<ReturnType<typeof startApplication>>;
  let browser: TestBrowser;
  let clientId: string;
  let endpoint: string;

  before(async function () {
    skipWithoutChromium(this);
    buildIfStale();
    const port = await freePort();
    endpoint = `http://localhost:${port}`;
    service = await startService({ port, env: { ENDPOINT: endpoint } });
    application = await startApplication();
    clientId = (
      await createApplication(service, 'SPA', {
        name: 'Acme Notes',
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

  /** Where the application sends the browser to sign in: the provider's authorization endpoint (PKCE). */
  function authorizeUrl(): string {
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
    return `${endpoint}/oidc/auth?${query}`;
  }

  /** Starts a sign-in as the application would, and signs in with the password. */
  async function signInWithPassword(page: Page, username: string): Promise<void> {
    await page.goto(authorizeUrl());
    await page.getByLabel('Username or email').fill(username);
    await page.getByLabel('Password', { exact: true }).fill(password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  }

  /** A platform authenticator that holds discoverable passkeys and verifies its user (as a fingerprint reader would). */
  async function virtualAuthenticator(context: BrowserContext, page: Page) {
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
    return { devtools, authenticatorId };
  }

  const landed = (page: Page) => page.waitForURL((url) => url.href.startsWith(`${application.origin}/callback?code=`));

  it('adds a passkey when the policy asks, then signs in with it; the factor is stored on the account', async () => {
    const username = 'passkey_e2e';
    const user = await createUser(service, { username, password });
    const context = await browser.newContext();
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));

    const { devtools, authenticatorId } = await virtualAuthenticator(context, page);

    await signInWithPassword(page, username);
    await page.getByRole('heading', { name: 'Add a passkey' }).waitFor();
    // An authenticator app may be chosen instead; the step may be declined (UserControlled).
    await page.getByRole('button', { name: 'Use an authenticator app instead' }).waitFor();
    await page.getByRole('button', { name: 'Not now' }).waitFor();
    await screenshotAtWidths(page, 'hosted-passkey-add');
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
    await screenshotAtWidths(page, 'hosted-passkey-use');
    await page.getByRole('button', { name: 'Use a passkey' }).click();
    await landed(page);
    const used = await devtools.send('WebAuthn.getCredentials', { authenticatorId });
    expect(used.credentials[0].signCount).to.be.greaterThan(credentials[0].signCount);
    expect(problems).to.deep.equal([]);
    await context.close();
  });

  it('signs in with a passkey alone (no password), once added; a passkey unknown here is refused with a clear message', async () => {
    const offer = async (passkeySignIn: { enabled: true; allowAutofill: boolean }) =>
      expect((await service.api.patch('sign-in-exp', { json: { passkeySignIn } })).statusCode).to.equal(200);
    // The button first: Chromium's virtual authenticator would answer the autofill prompt at once.
    await offer({ enabled: true, allowAutofill: false });
    const username = 'passwordless_e2e';
    await createUser(service, { username, password });
    const context = await browser.newContext();
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    const { devtools, authenticatorId } = await virtualAuthenticator(context, page);

    // The passkey is added at a password sign-in, when the MFA policy offers it.
    await signInWithPassword(page, username);
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await landed(page);
    const { credentials } = await devtools.send('WebAuthn.getCredentials', { authenticatorId });
    expect(credentials).to.have.length(1);
    expect(credentials[0].isResidentCredential).to.equal(true);

    // Signed out at the provider: the passkey alone signs in, no username typed, no second factor asked.
    await page.goto(`${endpoint}/oidc/session/end?${new URLSearchParams({ client_id: clientId })}`);
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.waitForURL((url) => url.pathname === '/oidc/session/end/success');
    await page.goto(authorizeUrl());
    const button = page.getByRole('button', { name: 'Sign in with a passkey' });
    await button.waitFor();
    await screenshotAtWidths(page, 'hosted-passkey-sign-in');
    await button.click();
    await landed(page);
    const used = await devtools.send('WebAuthn.getCredentials', { authenticatorId });
    expect(used.credentials[0].signCount).to.be.greaterThan(credentials[0].signCount);

    // The browser's autofill (conditional UI) on the username field: the virtual authenticator picks
    // the passkey as a person would in the field's suggestions, and the page signs in with it.
    await offer({ enabled: true, allowAutofill: true });
    await context.clearCookies();
    await page.goto(authorizeUrl());
    await landed(page);
    const autofilled = await devtools.send('WebAuthn.getCredentials', { authenticatorId });
    expect(autofilled.credentials[0].signCount).to.be.greaterThan(used.credentials[0].signCount);
    expect(problems).to.deep.equal([]);
    await context.close();

    // Another device, holding a passkey for this site that no account here has: refused, and the page says why.
    const stranger = await browser.newContext();
    const strangerPage = await stranger.newPage();
    const held = await virtualAuthenticator(stranger, strangerPage);
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    await held.devtools.send('WebAuthn.addCredential', {
      authenticatorId: held.authenticatorId,
      credential: {
        credentialId: randomBytes(32).toString('base64'),
        isResidentCredential: true,
        rpId: 'localhost',
        privateKey: privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64'),
        userHandle: Buffer.from('someone-else').toString('base64'),
        signCount: 0,
      },
    });
    await offer({ enabled: true, allowAutofill: false });
    await strangerPage.goto(authorizeUrl());
    await strangerPage.getByRole('button', { name: 'Sign in with a passkey' }).click();
    const refusal = strangerPage.locator('#passkey-sign-in-form-error');
    await refusal.getByText('This passkey is not registered for an account here.', { exact: false }).waitFor();
    await screenshotAtWidths(strangerPage, 'hosted-passkey-sign-in-refused');
    expect(strangerPage.url()).to.match(/\/sign-in/);
    await stranger.close();
  });
});
