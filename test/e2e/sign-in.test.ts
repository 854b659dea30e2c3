import { createHash, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { assert, expect } from 'chai';
import { decodeJwt } from 'jose';
import { generate } from 'otplib';
import { type BrowserContext, type Page } from 'playwright-core';

import { buildIfStale } from '../support/build.ts';
import { launchChromium, skipWithoutChromium, type TestBrowser } from '../support/chromium.ts';
import { createApplication } from '../support/fixtures.ts';
import { startService, type TestService } from '../support/service.ts';
import { ifSet } from '../support/values.ts';
import { startApplication } from './support.ts';

/**
 * The hosted sign-in pages in a real browser (Debian's Chromium, driven by playwright-core): an
 * application sends the browser to /oidc/auth, the pages drive the Experience API, and the browser
 * comes back to the application with a code the test exchanges for tokens.
 *
 * E2E_SCREENSHOTS=<folder> also saves screenshots of the pages there (for a person to look at).
 */
const screenshots = process.env.E2E_SCREENSHOTS;

type Authorization = { url: string; verifier: string; state: string };
type Tokens = { accessToken: string; idToken: string; sub: string };

describe('hosted sign-in pages in Chromium', function () {
  this.timeout(60_000);

  let service: TestService;
  let application: Awaited<ReturnType<typeof startApplication>>;
  let clientId: string;
  let browser: TestBrowser;
  let callback: string;
  let signedOut: string;
  const applicationName = 'Acme Notes';
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
    browser = await launchChromium();
  });

  after(async () => {
    await Promise.all(contexts.map((context) => context.close()));
    await ifSet(browser)?.close();
    ifSet(application)?.server.close();
    await ifSet(service)?.stop();
  });

  /** A fresh browser profile that reaches only this machine; errors the pages raise are collected. */
  async function newPage(viewport = { width: 1280, height: 800 }): Promise<{ page: Page; problems: string[] }> {
    const context = await browser.newContext({ viewport });
    contexts.push(context);
    // oidc-provider's own logout page imports a web font: nothing leaves 127.0.0.1.
    await context.route(
      (url) => url.hostname !== '127.0.0.1',
      (route) => route.abort(),
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

  function authorization(extra: Record<string, string> = {}): Authorization {
    const verifier = randomBytes(32).toString('base64url');
    const state = randomBytes(8).toString('hex');
    const query = new URLSearchParams({
      client_id: clientId,
      redirect_uri: callback,
      response_type: 'code',
      scope: 'openid profile',
      state,
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
      ...extra,
    });
    return { url: `${service.url}/oidc/auth?${query}`, verifier, state };
  }

  /** Waits for the browser to land on the application, then exchanges the code (PKCE) for tokens. */
  async function tokensFor(page: Page, { verifier, state }: Authorization): Promise<Tokens> {
    await page.waitForURL((url) => url.href.startsWith(callback));
    const landed = new URL(page.url());
    expect(landed.searchParams.get('state')).to.equal(state);
    const code = landed.searchParams.get('code');
    expect(code, landed.href).to.be.a('string');
    const response = await service.http.post('oidc/token', {
      form: {
        grant_type: 'authorization_code',
        code: code!,
        code_verifier: verifier,
        client_id: clientId,
        redirect_uri: callback,
      },
    });
    expect(response.statusCode, JSON.stringify(response.body)).to.equal(200);
    expect(response.body.access_token).to.be.a('string').and.not.equal('');
    expect(response.body.id_token).to.be.a('string').and.not.equal('');
    const idToken = decodeJwt(response.body.id_token);
    expect(idToken).to.include({ aud: clientId, iss: `${service.url}/oidc` });
    expect(idToken.sub).to.be.a('string');
    return { accessToken: response.body.access_token, idToken: response.body.id_token, sub: idToken.sub! };
  }

  async function screenshot(page: Page, name: string, viewport?: { width: number; height: number }) {
    if (!screenshots) {
      return;
    }
    if (viewport) {
      await page.setViewportSize(viewport);
    }
    await page.screenshot({ path: join(screenshots, `${name}.png`), fullPage: true });
  }

  /** The newest code the development connector kept for `recipient`. */
  async function latestCode(recipient: string, purpose: string): Promise<string> {
    const messages = await service.api.get('verification-messages', { searchParams: { recipient } });
    expect(messages.statusCode).to.equal(200);
    const message = (messages.body as Array<{ purpose: string; code: string }>).find(
      (item) => item.purpose === purpose,
    );
    assert.exists(message, `no ${purpose} code for ${recipient}`);
    return message.code;
  }

  it('registers, signs out, then signs in again as the same user; a wrong password is said on the page', async () => {
    const { page, problems } = await newPage();
    const username = 'e2e_user';
    const password = 'Correct-Horse-9';

    // first_screen=register: the provider sends the browser to /register.
    const first = authorization({ first_screen: 'register' });
    const landing = await page.goto(first.url);
    expect(new URL(page.url()).pathname).to.equal('/register');
    expect(landing?.headers()).to.include({
      'content-security-policy':
        "default-src 'self'; img-src 'self' data:; base-uri 'none'; object-src 'none'; form-action 'self'; frame-ancestors 'none'",
      'x-frame-options': 'DENY',
      'referrer-policy': 'no-referrer',
    });
    expect(await page.title()).to.equal('Create an account');
    await page.locator('#sign-in-to').getByText(`Create your account for ${applicationName}`).waitFor();

    // A password the policy refuses: each reason is a sentence next to the form.
    await page.getByLabel('Username').fill(username);
    await page.getByLabel('Password', { exact: true }).fill('abc12');
    await page.getByLabel('Confirm password').fill('abc12');
    await page.getByRole('button', { name: 'Create account' }).click();
    const registerError = page.locator('#register-form [data-error]');
    await registerError.getByText('Use at least 8 characters.').waitFor();
    expect(await registerError.textContent()).to.contain('repeated characters');
    expect(await registerError.getAttribute('aria-live')).to.equal('assertive');
    expect(await page.getByLabel('Password', { exact: true }).getAttribute('aria-invalid')).to.equal('true');
    await screenshot(page, 'register-policy-error-375', { width: 375, height: 700 });

    // Mismatched confirmation is caught before any request.
    await page.getByLabel('Password', { exact: true }).fill(password);
    await page.getByLabel('Confirm password').fill(`${password}x`);
    await page.getByRole('button', { name: 'Create account' }).click();
    await registerError.getByText('The two passwords do not match.', { exact: false }).waitFor();

    // Then with the keyboard: Enter in the last field submits.
    await page.getByLabel('Confirm password').fill(password);
    await page.getByLabel('Confirm password').press('Enter');
    const registered = await tokensFor(page, first);

    // Sign out at the provider (RP-initiated logout with the ID token: no confirmation, back to the application).
    await page.goto(
      `${service.url}/oidc/session/end?${new URLSearchParams({ id_token_hint: registered.idToken, post_logout_redirect_uri: signedOut, client_id: clientId })}`,
    );
    await page.waitForURL((url) => url.href.startsWith(signedOut));

    // A new authorization: no session any more, so the sign-in page.
    const second = authorization();
    const signInResponse = await page.goto(second.url);
    expect(new URL(page.url()).pathname).to.equal('/sign-in');
    expect(signInResponse?.headers()['content-security-policy']).to.contain("default-src 'self'");
    expect(await page.title()).to.equal('Sign in');
    await screenshot(page, 'sign-in-1280', { width: 1280, height: 800 });
    await screenshot(page, 'sign-in-375', { width: 375, height: 700 });

    await page.getByLabel('Username or email').fill(username);
    await page.getByLabel('Password', { exact: true }).fill('Wrong-Horse-9');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    const signInError = page.locator('#password-form [data-error]');
    await signInError.getByText('Incorrect account or password').waitFor();
    expect(await page.getByLabel('Password', { exact: true }).getAttribute('aria-invalid')).to.equal('true');
    // Focus went back to the password, ready to be typed again.
    expect(await page.evaluate(() => document.activeElement?.id)).to.equal('password');
    await screenshot(page, 'sign-in-error-375', { width: 375, height: 700 });

    await page.getByLabel('Password', { exact: true }).fill(password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    const signedIn = await tokensFor(page, second);
    expect(signedIn.sub).to.equal(registered.sub);

    const me = await service.http.get('oidc/me', { headers: { authorization: `Bearer ${signedIn.accessToken}` } });
    expect(me.statusCode).to.equal(200);
    expect(me.body).to.include({ sub: registered.sub, username });
    expect(problems).to.deep.equal([]);
  });

  it('resets a forgotten password by email code, signs in with it, and signs in with an email code', async () => {
    const email = 'carol@example.com';
    const user = await service.api.post('users', {
      json: { username: 'carol', primaryEmail: email, password: 'Old-Pass-Word-7' },
    });
    expect(user.statusCode, JSON.stringify(user.body)).to.equal(200);

    const { page, problems } = await newPage({ width: 375, height: 700 });
    const first = authorization();
    await page.goto(first.url);
    await page.getByRole('link', { name: 'Forgot your password?' }).click();
    await page.waitForURL(`${service.url}/reset-password`);

    await page.getByLabel('Email').fill(email);
    await page.getByRole('button', { name: 'Send code' }).click();
    await page.getByLabel('6-digit code').waitFor();
    const resetCode = await latestCode(email, 'ForgotPassword');
    const wrongCode = resetCode.replace(/^\d/, (digit) => String((Number(digit) + 1) % 10));
    await page.getByLabel('6-digit code').fill(wrongCode);
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.locator('#reset-verify-form [data-error]').getByText('Invalid verification code.').waitFor();
    await page.getByLabel('6-digit code').fill(resetCode);
    await page.getByRole('button', { name: 'Continue' }).click();

    await page.getByLabel('New password', { exact: true }).fill('Old-Pass-Word-7');
    await page.getByLabel('Confirm new password').fill('Old-Pass-Word-7');
    await page.getByRole('button', { name: 'Save new password' }).click();
    await page.locator('#reset-password-form [data-error]').getByText('cannot be the same').waitFor();
    await page.getByLabel('New password', { exact: true }).fill('New-Pass-Word-8');
    await page.getByLabel('Confirm new password').fill('New-Pass-Word-8');
    await page.getByRole('button', { name: 'Save new password' }).click();
    await page.getByText('Password changed.').waitFor();
    await screenshot(page, 'reset-password-done-375');

    // The interaction goes on: back to sign-in, with the email and the new password.
    await page.getByRole('link', { name: 'Back to sign in' }).click();
    await page.waitForURL(`${service.url}/sign-in`);
    await page.getByLabel('Username or email').fill(email);
    await page.getByLabel('Password', { exact: true }).fill('New-Pass-Word-8');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    const afterReset = await tokensFor(page, first);
    expect(afterReset.sub).to.equal(user.body.id);

    // Another browser: sign in with a code sent to the email.
    const other = await newPage({ width: 375, height: 700 });
    const second = authorization();
    await other.page.goto(second.url);
    await other.page.getByRole('button', { name: 'Sign in with an email code instead' }).click();
    await other.page.getByLabel('Email', { exact: true }).fill(email);
    await other.page.getByRole('button', { name: 'Send code' }).click();
    await other.page.getByLabel('6-digit code').waitFor();
    await other.page.getByLabel('6-digit code').fill(await latestCode(email, 'SignIn'));
    await screenshot(other.page, 'sign-in-code-375');
    await other.page.getByRole('button', { name: 'Sign in', exact: true }).click();
    const byCode = await tokensFor(other.page, second);
    expect(byCode.sub).to.equal(user.body.id);
    expect([...problems, ...other.problems]).to.deep.equal([]);
  });

  it('enrols an authenticator app (with backup codes) at sign-in, signs out, then signs in with a TOTP code', async () => {
    const settings = await service.api.patch('sign-in-exp', {
      json: { mfa: { factors: ['Totp', 'BackupCode'], policy: 'UserControlled' } },
    });
    expect(settings.statusCode).to.equal(200);
    try {
      const user = await service.api.post('users', { json: { username: 'dana', password: 'Blue-Kettle-Song-5' } });
      expect(user.statusCode, JSON.stringify(user.body)).to.equal(200);
      const { page, problems } = await newPage();

      const first = authorization();
      await page.goto(first.url);
      await page.getByLabel('Username or email').fill('dana');
      await page.getByLabel('Password', { exact: true }).fill('Blue-Kettle-Song-5');
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();

      // The policy offers MFA (it may be declined): the enrolment shows a QR code and the key.
      await page.getByRole('heading', { name: 'Set up two-step verification' }).waitFor();
      expect(await page.getByRole('button', { name: 'Not now' }).isVisible()).to.equal(true);
      const qr = await page.getByAltText('QR code for your authenticator app').getAttribute('src');
      expect(qr).to.match(/^data:image\/png;base64,/);
      const secret = (await page.locator('[data-secret]').textContent())!.trim();
      expect(secret).to.match(/^[A-Z2-7]{32}$/);
      await screenshot(page, 'mfa-enrol-375', { width: 375, height: 800 });

      await page.getByLabel('6-digit code from the app').fill('000000');
      await page.getByRole('button', { name: 'Turn on' }).click();
      await page.locator('#mfa-enrol-form [data-error]').getByText('not valid').waitFor();
      await page.getByLabel('6-digit code from the app').fill(await generate({ secret }));
      await page.getByRole('button', { name: 'Turn on' }).click();

      // Backup codes are enabled too: shown once, then bound.
      await page.getByRole('heading', { name: 'Save your backup codes' }).waitFor();
      const codes = await page.locator('[data-codes] li').allTextContents();
      expect(codes).to.have.length(10);
      await page.getByRole('button', { name: 'I have saved these codes' }).click();
      const enrolled = await tokensFor(page, first);

      const factors = await service.api.get(`users/${enrolled.sub}/mfa-verifications`);
      expect(factors.body.map((factor: { type: string }) => factor.type)).to.have.members(['Totp', 'BackupCode']);

      await page.goto(
        `${service.url}/oidc/session/end?${new URLSearchParams({ id_token_hint: enrolled.idToken, post_logout_redirect_uri: signedOut, client_id: clientId })}`,
      );
      await page.waitForURL((url) => url.href.startsWith(signedOut));

      // Signing in again asks for a code from the app. The enrolment's code was used: the next
      // period's (accepted for clock drift) is a fresh one.
      const second = authorization();
      await page.goto(second.url);
      await page.getByLabel('Username or email').fill('dana');
      await page.getByLabel('Password', { exact: true }).fill('Blue-Kettle-Song-5');
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.getByRole('heading', { name: 'Two-step verification' }).waitFor();
      await screenshot(page, 'mfa-verify-375', { width: 375, height: 700 });
      await page
        .getByLabel('Code from your authenticator app')
        .fill(await generate({ secret, epoch: Math.floor(Date.now() / 1000) + 30 }));
      await page.getByRole('button', { name: 'Verify' }).click();
      const signedIn = await tokensFor(page, second);
      expect(signedIn.sub).to.equal(enrolled.sub);
      expect(problems).to.deep.equal([]);
    } finally {
      await service.api.patch('sign-in-exp', { json: { mfa: { factors: [], policy: 'UserControlled' } } });
    }
  });
  it("proves the second factor with a code sent to the account's email, offered masked", async () => {
    const before = await service.api.get('sign-in-exp');
    const settings = await service.api.patch('sign-in-exp', {
      json: {
        signIn: {
          methods: [
            { identifier: 'username', password: true, verificationCode: false, isPasswordPrimary: true },
            { identifier: 'email', password: true, verificationCode: false, isPasswordPrimary: true },
          ],
        },
        mfa: { factors: ['EmailVerificationCode'], policy: 'UserControlled' },
      },
    });
    expect(settings.statusCode, JSON.stringify(settings.body)).to.equal(200);
    try {
      const email = 'erin@example.com';
      const user = await service.api.post('users', {
        json: { username: 'erin', primaryEmail: email, password: 'Amber-Lantern-Walk-8' },
      });
      expect(user.statusCode, JSON.stringify(user.body)).to.equal(200);
      const { page, problems } = await newPage();

      const flow = authorization();
      await page.goto(flow.url);
      await page.getByLabel('Username or email').fill('erin');
      await page.getByLabel('Password', { exact: true }).fill('Amber-Lantern-Walk-8');
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();

      await page.getByRole('heading', { name: 'Two-step verification' }).waitFor();
      const send = page.getByRole('button', { name: 'Send a code to ****@example.com' });
      await send.waitFor();
      expect(await send.evaluate((element) => element === document.activeElement)).to.equal(true);
      await send.click();
      await page.getByText('We sent a 6-digit code to ****@example.com.').waitFor();
      await screenshot(page, 'mfa-email-code-375', { width: 375, height: 700 });

      const code = await latestCode(email, 'MfaVerification');
      await page.getByLabel('6-digit code').fill(code === '000000' ? '111111' : '000000');
      await page.getByRole('button', { name: 'Verify' }).click();
      await page.locator('#mfa-verify-form [data-error]').getByText('Invalid verification code').waitFor();
      await page.getByLabel('6-digit code').fill(code);
      await page.getByRole('button', { name: 'Verify' }).click();
      const signedIn = await tokensFor(page, flow);
      expect(signedIn.sub).to.equal(user.body.id);
      expect(problems).to.deep.equal([]);
    } finally {
      await service.api.patch('sign-in-exp', { json: { signIn: before.body.signIn, mfa: before.body.mfa } });
    }
  });

  describe('an account that lacks what the sign-up settings require (user.missing_profile)', () => {
    /** The input that has the focus, once the page has moved it (an effect after the render that shows the step or error). */
    const focusOn = (page: Page, id: string) =>
      page.waitForFunction((expected) => document.activeElement?.id === expected, id, { timeout: 5000 });

    it('asks an account without a username for one, saying the username rules, then lands at the application', async () => {
      const password = 'Silver-Maple-Road-6';
      const user = await service.api.post('users', { json: { primaryEmail: 'frank@example.com', password } });
      expect(user.statusCode, JSON.stringify(user.body)).to.equal(200);
      const taken = await service.api.post('users', { json: { username: 'frank_taken' } });
      expect(taken.statusCode, JSON.stringify(taken.body)).to.equal(200);
      const { page, problems } = await newPage({ width: 375, height: 700 });

      const flow = authorization();
      await page.goto(flow.url);
      await page.getByLabel('Username or email').fill('frank@example.com');
      await page.getByLabel('Password', { exact: true }).fill(password);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();

      // The default sign-up settings want a username: the card asks for it, its input focused.
      await page.getByRole('heading', { name: 'Complete your account' }).waitFor();
      await page.getByText('Before you continue, your account needs a username.').waitFor();
      await focusOn(page, 'profile-username');
      expect(await page.getByLabel('Password', { exact: true }).count()).to.equal(0);
      await screenshot(page, 'complete-profile-username-375');

      // The API's username rule, then a username someone has: said on the input, which takes the focus.
      const error = page.locator('#profile-form [data-error]');
      await page.getByLabel('Username').fill('9lives');
      await page.getByRole('button', { name: 'Continue' }).click();
      await error.getByText('must start with a letter or _').waitFor();
      expect(await error.getAttribute('aria-live')).to.equal('assertive');
      expect(await page.getByLabel('Username').getAttribute('aria-invalid')).to.equal('true');
      await focusOn(page, 'profile-username');
      await screenshot(page, 'complete-profile-username-rule-375');
      await page.getByLabel('Username').fill('frank_taken');
      await page.getByLabel('Username').press('Enter');
      await error.getByText('This username is already in use.').waitFor();
      await screenshot(page, 'complete-profile-username-error-375');

      await page.getByLabel('Username').fill('frank');
      await page.getByRole('button', { name: 'Continue' }).click();
      const signedIn = await tokensFor(page, flow);
      expect(signedIn.sub).to.equal(user.body.id);
      expect((await service.api.get(`users/${user.body.id}`)).body).to.include({ username: 'frank' });
      expect(problems).to.deep.equal([]);
    });

    it('asks an account made with an email only for a username and a password, saying the policy; the password then signs in', async () => {
      const email = 'gina@example.com';
      const user = await service.api.post('users', { json: { primaryEmail: email } });
      expect(user.statusCode, JSON.stringify(user.body)).to.equal(200);
      const { page, problems } = await newPage();

      const first = authorization();
      await page.goto(first.url);
      await page.getByRole('button', { name: 'Sign in with an email code instead' }).click();
      await page.getByLabel('Email', { exact: true }).fill(email);
      await page.getByRole('button', { name: 'Send code' }).click();
      await page.getByLabel('6-digit code').waitFor();
      await page.getByLabel('6-digit code').fill(await latestCode(email, 'SignIn'));
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();

      await page.getByText('Before you continue, your account needs a username and a password.').waitFor();
      await focusOn(page, 'profile-username');
      expect(await page.getByRole('form', { name: 'Complete your account' }).getAttribute('aria-describedby')).to.equal(
        'profile-intro',
      );
      await screenshot(page, 'complete-profile-1280');
      await screenshot(page, 'complete-profile-390', { width: 390, height: 844 });

      await page.getByLabel('Username').fill('gina');
      await page.getByLabel('Password', { exact: true }).fill('abc12');
      await page.getByLabel('Confirm password').fill('abc12');
      await page.getByRole('button', { name: 'Continue' }).click();
      const error = page.locator('#profile-form [data-error]');
      await error.getByText('Use at least 8 characters.').waitFor();
      expect(await page.getByLabel('Password', { exact: true }).getAttribute('aria-invalid')).to.equal('true');
      await focusOn(page, 'profile-password');
      await screenshot(page, 'complete-profile-policy-375');

      const password = 'Tall-Cedar-Bridge-3';
      await page.getByLabel('Password', { exact: true }).fill(password);
      await page.getByLabel('Confirm password').fill(password);
      await page.getByRole('button', { name: 'Continue' }).click();
      const signedIn = await tokensFor(page, first);
      expect(signedIn.sub).to.equal(user.body.id);
      expect((await service.api.get(`users/${user.body.id}`)).body).to.include({ username: 'gina', hasPassword: true });

      // The password chosen is the account's now: another browser signs in with it, asked nothing more.
      const other = await newPage();
      const second = authorization();
      await other.page.goto(second.url);
      await other.page.getByLabel('Username or email').fill('gina');
      await other.page.getByLabel('Password', { exact: true }).fill(password);
      await other.page.getByRole('button', { name: 'Sign in', exact: true }).click();
      expect((await tokensFor(other.page, second)).sub).to.equal(user.body.id);
      expect([...problems, ...other.problems]).to.deep.equal([]);
    });

    it('asks for an email or a phone when the settings want one, proving the phone chosen with a code', async () => {
      const before = await service.api.get('sign-in-exp');
      const settings = await service.api.patch('sign-in-exp', {
        json: { signUp: { identifiers: ['email', 'phone'], password: true, verify: true } },
      });
      expect(settings.statusCode, JSON.stringify(settings.body)).to.equal(200);
      try {
        const password = 'Quiet-Harbor-Lamp-2';
        const user = await service.api.post('users', { json: { username: 'hana', password } });
        expect(user.statusCode, JSON.stringify(user.body)).to.equal(200);
        const { page, problems } = await newPage({ width: 375, height: 700 });

        const flow = authorization();
        await page.goto(flow.url);
        await page.getByLabel('Username or email').fill('hana');
        await page.getByLabel('Password', { exact: true }).fill(password);
        await page.getByRole('button', { name: 'Sign in', exact: true }).click();

        await page.getByText('Before you continue, your account needs an email address or a phone number.').waitFor();
        await focusOn(page, 'profile-email');
        await page.getByRole('button', { name: 'Use a phone number instead' }).click();
        await page.getByLabel('Phone number').fill('12');
        await page.getByRole('button', { name: 'Send code' }).click();
        await page.locator('#profile-send-form [data-error]').getByText('with its country code').waitFor();
        await focusOn(page, 'profile-phone');

        const phone = '15550100123';
        await page.getByLabel('Phone number').fill('+1 555 010 0123');
        await page.getByRole('button', { name: 'Send code' }).click();
        await page.getByText('We sent a 6-digit code to +15550100123.', { exact: false }).waitFor();
        await screenshot(page, 'complete-profile-phone-375');
        await page.getByLabel('6-digit code').fill(await latestCode(phone, 'SignIn'));
        await page.getByRole('button', { name: 'Continue' }).click();
        const signedIn = await tokensFor(page, flow);
        expect(signedIn.sub).to.equal(user.body.id);
        expect((await service.api.get(`users/${user.body.id}`)).body).to.include({ primaryPhone: phone });
        expect(problems).to.deep.equal([]);
      } finally {
        await service.api.patch('sign-in-exp', { json: { signUp: before.body.signUp } });
      }
    });
  });
});
