import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';

import { exportConfiguration } from '../../lib/config-transfer/export.ts';
import { importConfiguration } from '../../lib/config-transfer/import.ts';
import { pageHeaders } from '../../lib/http/pages/page-headers.ts';
import { captchaWidgetOrigins } from '../../lib/sign-in-experience/captcha/captcha-schemas.ts';
import { openDatabase } from '../../lib/storage/database.ts';
import { migrateToLatest } from '../../lib/storage/migrate.ts';
import { freshDatabaseUrl } from '../support/database.ts';
import { expectError, expectStatus } from '../support/expect.ts';
import { type ExternalSignIn, startExternalSignIn, verifyAtIdp } from '../support/external-sign-in.ts';
import { createIdpUser } from '../support/idp.ts';
import { type HttpResponse, startService, type TestService } from '../support/service.ts';
import { ifSet, unique } from '../support/values.ts';
import type { Browser } from './browser.ts';
import {
  createSpa,
  createUser,
  identify,
  messagesTo,
  newEmail,
  openExperience,
  passwordVerification,
  sendCode,
  submitToApplication,
} from './experience-helpers.ts';

/** Cloudflare's test secret keys (developers.cloudflare.com/turnstile/troubleshooting/testing), as Logto's tests use them. */
const alwaysPasses = '1x0000000000000000000000000000000AA';
const alwaysFails = '2x0000000000000000000000000000000AA';
const recaptchaApiKey = 'AIzaSyD-recaptcha-api-key-0123456789';

type Asked = { path: string; form: URLSearchParams; json: Record<string, unknown>; apiKey?: string };

/**
 * A local stand-in for Cloudflare's siteverify (`POST /turnstile`, answering as Cloudflare answers
 * its test secret keys) and reCAPTCHA Enterprise's assessments (`POST /recaptcha/projects/:id/assessments`:
 * `bad-token`, or another API key, is invalid; `low-score` scores 0.1, any other token 0.9). It can be
 * told to fail.
 */
class FakeVerifier {
  readonly asked: Asked[] = [];
  mode: 'answer' | 'hang' | 'reset' | 'unavailable' | 'not-json' | 'other-shape' = 'answer';

  private readonly server: Server;

  private constructor(server: Server) {
    this.server = server;
  }

  static async start(): Promise<FakeVerifier> {
    const server = createServer();
    const fake = new FakeVerifier(server);
    server.on('request', (request: IncomingMessage, response) => {
      let text = '';
      request.on('data', (chunk: Buffer) => (text += chunk.toString()));
      request.on('end', () => fake.answer(request, text, response));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return fake;
  }

  private answer(request: IncomingMessage, text: string, response: ServerResponse): void {
    const isJson = request.headers['content-type'] === 'application/json';
    this.asked.push({
      path: request.url ?? '',
      form: new URLSearchParams(isJson ? '' : text),
      json: isJson ? (JSON.parse(text) as Record<string, unknown>) : {},
      apiKey: request.headers['x-goog-api-key'] as string | undefined,
    });
    const send = (body: unknown) =>
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    switch (this.mode) {
      case 'hang':
        return; // never answers; the socket is closed when the server stops
      case 'reset':
        request.socket.destroy();
        return;
      case 'unavailable':
        response.writeHead(503).end();
        return;
      case 'not-json':
        response.writeHead(200, { 'content-type': 'text/html' }).end('<html>maintenance</html>');
        return;
      case 'other-shape':
        send({ ok: true });
        return;
      case 'answer':
        break;
    }
    if (request.url === '/turnstile') {
      const secret = new URLSearchParams(text).get('secret');
      send(
        secret === alwaysPasses
          ? { success: true, 'error-codes': [] }
          : {
              success: false,
              'error-codes': [secret === alwaysFails ? 'invalid-input-response' : 'invalid-input-secret'],
            },
      );
      return;
    }
    const { event } = JSON.parse(text) as { event: { token: string } };
    const known = request.headers['x-goog-api-key'] === recaptchaApiKey;
    send({
      tokenProperties:
        known && event.token !== 'bad-token' ? { valid: true } : { valid: false, invalidReason: 'MALFORMED' },
      riskAnalysis: { score: event.token === 'low-score' ? 0.1 : 0.9 },
    });
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

type Provider = { tenantId: string; id: string; config: Record<string, string>; createdAt: number; updatedAt: number };

describe("captcha: Logto's /api/captcha-provider and its policy at sign-up, sign-in and reset", function () {
  this.timeout(30_000);
  let verifier: FakeVerifier;
  let service: TestService;
  let spa: { id: string };
  /** Every management and experience answer a test read, for the secret's absence. */
  const answers: HttpResponse[] = [];
  const seen = (response: HttpResponse) => {
    answers.push(response);
    return response;
  };

  before(async () => {
    verifier = await FakeVerifier.start();
    service = await startService({
      logs: true,
      env: {
        CAPTCHA_VERIFY_URL_TURNSTILE: `${verifier.url}/turnstile`,
        CAPTCHA_VERIFY_URL_RECAPTCHA: `${verifier.url}/recaptcha`,
      },
    });
    spa = await createSpa(service);
  });
  after(async () => {
    await ifSet(service)?.stop();
    await ifSet(verifier)?.stop();
  });
  afterEach(() => {
    verifier.mode = 'answer';
  });

  const getProvider = async () => seen(await service.api.get<Provider>('captcha-provider'));
  const putProvider = async (config: Record<string, string | undefined>) =>
    seen(await service.api.put<Provider>('captcha-provider', { json: { config } }));
  const turnstile = (secretKey: string) => ({ type: 'Turnstile', siteKey: '1x00000000000000000000AA', secretKey });
  const setPolicy = async (enabled: boolean) =>
    expectStatus(seen(await service.api.patch('sign-in-exp', { json: { captchaPolicy: { enabled } } })), 200);
  /** PUT /api/experience, with the widget's token or without. */
  const open = async (event: 'SignIn' | 'Register' | 'ForgotPassword', captchaToken?: string) => {
    const browser = await openExperience(service, spa.id, null);
    const started = seen(
      await browser.call('put', 'api/experience', { interactionEvent: event, ...(captchaToken && { captchaToken }) }),
    );
    return { browser, started };
  };
  const passwordSignIn = async (browser: Browser, username: string, password: string) => {
    const verification = seen(await passwordVerification(browser, { type: 'username', value: username }, password));
    expectStatus(verification, 200);
    expectStatus(seen(await identify(browser, { verificationId: verification.body.verificationId })), 204);
  };
  const register = async (browser: Browser, username: string) => {
    const proposed = seen(
      await browser.call('post', 'api/experience/verification/new-password-identity', {
        identifier: { type: 'username', value: username },
        password: 'Lantern-Harbor-58',
      }),
    );
    expectStatus(proposed, 200);
    return seen(await identify(browser, { verificationId: proposed.body.verificationId }));
  };

  describe('the management API, as Logto answers it', () => {
    it('404 entity.not_found before one is set up; PUT sets it up and replaces it, GET reads it, DELETE removes it', async () => {
      expectError(await getProvider(), 404, 'entity.not_found');

      const created = await putProvider(turnstile(alwaysPasses));
      expectStatus(created, 200);
      expect(created.body).to.include({ tenantId: 'default' });
      expect(created.body.config).to.deep.equal({
        type: 'Turnstile',
        siteKey: '1x00000000000000000000AA',
        secretKey: '••••••••00AA',
      });
      expect(created.body.createdAt).to.be.a('number');
      expect((await getProvider()).body).to.deep.equal(created.body);

      const replaced = await putProvider({
        type: 'RecaptchaEnterprise',
        siteKey: 'site-key',
        secretKey: recaptchaApiKey,
        projectId: 'identity-test',
        domain: 'recaptcha.net',
      });
      expectStatus(replaced, 200);
      expect(replaced.body.id).to.equal(created.body.id);
      expect(replaced.body.config).to.deep.equal({
        type: 'RecaptchaEnterprise',
        siteKey: 'site-key',
        secretKey: '••••••••6789',
        projectId: 'identity-test',
        domain: 'recaptcha.net',
      });

      expectStatus(seen(await service.api.delete('captcha-provider')), 204);
      expectError(await getProvider(), 404, 'entity.not_found');
      // Deleting one that is not there is not an error (Logto's).
      expectStatus(seen(await service.api.delete('captcha-provider')), 204);
    });

    it('refuses a configuration Logto would not take, with 400 guard.invalid_input, changing nothing', async () => {
      expectStatus(await putProvider(turnstile(alwaysPasses)), 200);
      const before = (await getProvider()).body;
      for (const config of [
        { type: 'hCaptcha', siteKey: 'a', secretKey: 'b' },
        { type: 'Turnstile', siteKey: 'a' },
        { type: 'Turnstile', siteKey: 'a', secretKey: 'b', projectId: 'c' },
        { type: 'RecaptchaEnterprise', siteKey: 'a', secretKey: 'b' },
        { type: 'RecaptchaEnterprise', siteKey: 'a', secretKey: 'b', projectId: '../../admin' },
        { type: 'RecaptchaEnterprise', siteKey: 'a', secretKey: 'b', projectId: 'p', mode: 'audio' },
        // A mask stands for a stored secret key of the same provider only.
        { type: 'RecaptchaEnterprise', siteKey: 'a', secretKey: '••••••••00AA', projectId: 'p' },
      ]) {
        expectError(await putProvider(config), 400, 'guard.invalid_input');
      }
      expectError(seen(await service.api.put('captcha-provider', { json: {} })), 400, 'guard.invalid_input');
      expect((await getProvider()).body).to.deep.equal(before);
    });

    it("takes the mask back as the stored secret key (a form saved unchanged), as connectors' secrets", async () => {
      expectStatus(await putProvider(turnstile(alwaysPasses)), 200);
      expectStatus(await putProvider({ ...turnstile('••••••••00AA'), siteKey: 'another-site-key' }), 200);
      await setPolicy(true);
      const { started } = await open('SignIn', 'a-token');
      expectStatus(started, 204);
      expect(verifier.asked.at(-1)?.form.get('secret')).to.equal(alwaysPasses);
      await setPolicy(false);
    });

    it("turns the sign-in experience's captcha policy off when the provider is deleted (Logto's)", async () => {
      expectStatus(await putProvider(turnstile(alwaysPasses)), 200);
      await setPolicy(true);
      expectStatus(seen(await service.api.delete('captcha-provider')), 204);
      expect((await service.api.get('sign-in-exp')).body.captchaPolicy).to.deep.equal({ enabled: false });
    });
  });

  describe('the sign-in page settings', () => {
    it('name the widget (type and site key, never the secret key) only while the policy is on', async () => {
      expect((await service.api.get('sign-in-exp')).body.captchaPolicy).to.be.an('object');
      expectStatus(
        await putProvider({
          type: 'RecaptchaEnterprise',
          siteKey: 'site-key',
          secretKey: recaptchaApiKey,
          projectId: 'identity-test',
          mode: 'checkbox',
        }),
        200,
      );
      await setPolicy(false);
      const off = seen(await service.http.get('api/.well-known/sign-in-exp'));
      expect(off.body).to.not.have.property('captchaConfig');
      await setPolicy(true);
      const on = seen(await service.http.get('api/.well-known/sign-in-exp'));
      expect(on.body.captchaConfig).to.deep.equal({
        type: 'RecaptchaEnterprise',
        siteKey: 'site-key',
        mode: 'checkbox',
      });
      expect(on.body.captchaPolicy).to.deep.equal({ enabled: true });
      await setPolicy(false);
    });
  });

  describe('with the policy on (Turnstile)', () => {
    before(async () => {
      expectStatus(await putProvider(turnstile(alwaysPasses)), 200);
      await setPolicy(true);
    });
    after(() => setPolicy(false));

    it('signs in with a token the verifier accepts, which receives the secret key and the token', async () => {
      const username = unique('captcha');
      await createUser(service, { username, password: 'Granite-Kestrel-64' });
      const { browser, started } = await open('SignIn', 'token-from-the-widget');
      expectStatus(started, 204);
      expect(verifier.asked.at(-1)).to.deep.include({ path: '/turnstile' });
      expect(Object.fromEntries(verifier.asked.at(-1)!.form)).to.deep.equal({
        secret: alwaysPasses,
        response: 'token-from-the-widget',
      });
      await passwordSignIn(browser, username, 'Granite-Kestrel-64');
      await submitToApplication(browser);
    });

    it('refuses the sign-in without a token at submit: 422 session.captcha_required', async () => {
      const username = unique('captcha');
      await createUser(service, { username, password: 'Granite-Kestrel-64' });
      const { browser, started } = await open('SignIn');
      expectStatus(started, 204);
      await passwordSignIn(browser, username, 'Granite-Kestrel-64');
      expectError(seen(await browser.call('post', 'api/experience/submit')), 422, 'session.captcha_required');
    });

    it('refuses a token the verifier rejects: 422 session.captcha_failed, and the experience is not started', async () => {
      expectStatus(await putProvider(turnstile(alwaysFails)), 200);
      try {
        const { browser, started } = await open('SignIn', 'token-from-the-widget');
        expectError(started, 422, 'session.captcha_failed');
        expect(started.body.message).to.equal('Captcha verification failed.');
        expectError(
          seen(await browser.call('get', 'api/experience/interaction')),
          404,
          'session.interaction_not_found',
        );
      } finally {
        expectStatus(await putProvider(turnstile(alwaysPasses)), 200);
      }
      const refused = service
        .logs()
        .split('\n')
        .find((line) => line.includes('a captcha token was refused by its verifier'));
      expect(refused, service.logs().slice(-2000)).to.not.equal(undefined);
      expect(JSON.parse(refused!)).to.include({
        captchaProvider: 'Turnstile',
        outcome: 'rejected',
        detail: 'invalid-input-response',
      });
    });

    it('registers with a token; without one, 422 session.captcha_required before the account exists', async () => {
      const username = unique('newcomer');
      const refused = await open('Register');
      expectError(await register(refused.browser, username), 422, 'session.captcha_required');
      expect((await service.api.get('users', { searchParams: { search: `%${username}%` } })).body).to.deep.equal([]);

      const { browser, started } = await open('Register', 'token-from-the-widget');
      expectStatus(started, 204);
      expectStatus(await register(browser, username), 201);
      await submitToApplication(browser);
    });

    it('sends no code to anyone unidentified without a token (422, nothing sent), and one with a token', async () => {
      const email = newEmail('captcha');
      const refused = await open('Register');
      expectError(seen(await sendCode(refused.browser, email, 'Register')), 422, 'session.captcha_required');
      expect(await messagesTo(service, email)).to.deep.equal([]);

      const { browser } = await open('Register', 'token-from-the-widget');
      expectStatus(seen(await sendCode(browser, email, 'Register')), 200);
      expect(await messagesTo(service, email)).to.have.lengthOf(1);
    });

    it('asks for it in a password reset too', async () => {
      const email = newEmail('reset');
      await createUser(service, { username: unique('reset'), primaryEmail: email, password: 'Granite-Kestrel-64' });
      const { browser } = await open('ForgotPassword');
      expectError(seen(await sendCode(browser, email, 'ForgotPassword')), 422, 'session.captcha_required');
    });

    it('needs none after a magic link (a proof that vouches for the person, as Logto skips it)', async () => {
      const email = newEmail('magic');
      await createUser(service, { username: unique('magic'), primaryEmail: email, password: 'Granite-Kestrel-64' });
      const created = await service.api.post('one-time-tokens', { json: { email } });
      expectStatus(created, 200);
      const { browser } = await open('SignIn');
      const verified = await browser.call('post', 'api/experience/verification/one-time-token/verify', {
        token: created.body.token,
        identifier: { type: 'email', value: email },
      });
      expectStatus(verified, 200);
      expectStatus(await identify(browser, { verificationId: verified.body.verificationId }), 204);
      await submitToApplication(browser);
    });

    for (const [mode, detail] of [
      ['unavailable', /^the answer was HTTP 503$/],
      ['reset', /socket hang up|ECONNRESET/],
      ['not-json', /^the answer is not JSON$/],
      ['other-shape', /^the verifier's answer is not of the expected shape$/],
      ['hang', /aborted/],
    ] as const) {
      it(`refuses the request when the verifier ${mode === 'hang' ? 'does not answer within 5 s' : `answers ${mode}`} (422, fail-closed), naming it in the log`, async () => {
        verifier.mode = mode;
        const started = Date.now();
        const refused = (await open('SignIn', 'token-from-the-widget')).started;
        expect(Date.now() - started).to.be.below(8000);
        expectError(refused, 422, 'session.captcha_failed');
        expect(refused.body.message).to.equal('The captcha could not be checked right now. Please try again.');
        const line = service
          .logs()
          .split('\n')
          .filter((text) => text.includes('its verifier gave no usable answer'))
          .map((text) => JSON.parse(text) as Record<string, unknown>)
          .at(-1);
        expect(line).to.include({ captchaProvider: 'Turnstile', outcome: 'unavailable' });
        expect(String(line?.detail)).to.match(detail);
      });
    }
  });

  describe('with the policy on (reCAPTCHA Enterprise)', () => {
    const recaptcha = (mode?: string) => ({
      type: 'RecaptchaEnterprise',
      siteKey: 'site-key',
      secretKey: recaptchaApiKey,
      projectId: 'identity-test',
      ...(mode && { mode }),
    });
    before(() => setPolicy(true));
    after(() => setPolicy(false));

    it('asks the assessments API with the API key in a header (not the URL), and passes a good score', async () => {
      expectStatus(await putProvider(recaptcha()), 200);
      expectStatus((await open('SignIn', 'good-token')).started, 204);
      const asked = verifier.asked.at(-1)!;
      expect(asked.path).to.equal('/recaptcha/projects/identity-test/assessments');
      expect(asked.apiKey).to.equal(recaptchaApiKey);
      expect(asked.json).to.deep.equal({
        event: { token: 'good-token', siteKey: 'site-key', expectedAction: 'interaction' },
      });
    });

    it('refuses an invalid token and a low score, unless the widget is a checkbox (Logto: its score does not count)', async () => {
      expectStatus(await putProvider(recaptcha()), 200);
      expectError((await open('SignIn', 'bad-token')).started, 422, 'session.captcha_failed');
      expectError((await open('SignIn', 'low-score')).started, 422, 'session.captcha_failed');
      expectStatus(await putProvider(recaptcha('checkbox')), 200);
      expectStatus((await open('SignIn', 'low-score')).started, 204);
      expectError((await open('SignIn', 'bad-token')).started, 422, 'session.captcha_failed');
    });
  });

  describe('with the policy off', () => {
    it('asks for nothing: sign-in, registration and codes go on without a token, and the verifier is not asked', async () => {
      await setPolicy(false);
      expectStatus(await putProvider(turnstile(alwaysFails)), 200);
      const asked = verifier.asked.length;
      const username = unique('nocaptcha');
      await createUser(service, { username, password: 'Granite-Kestrel-64' });
      const signIn = await open('SignIn');
      await passwordSignIn(signIn.browser, username, 'Granite-Kestrel-64');
      await submitToApplication(signIn.browser);
      const registration = await open('Register');
      expectStatus(await register(registration.browser, unique('newcomer')), 201);
      expectStatus(seen(await sendCode((await open('Register')).browser, newEmail('code'), 'Register')), 200);
      expect(verifier.asked.length).to.equal(asked);
    });
  });

  describe('the sign-in pages', () => {
    it("allow the widget's script and frame in their CSP, from the provider's origins only", () => {
      const csp = (origins: Parameters<typeof pageHeaders>[0]) => pageHeaders(origins)['Content-Security-Policy'];
      expect(csp({})).to.not.match(/script-src|frame-src/);
      expect(csp(captchaWidgetOrigins({ type: 'Turnstile', siteKey: 'k' }))).to.include(
        "default-src 'self'; script-src 'self' https://challenges.cloudflare.com; frame-src https://challenges.cloudflare.com;",
      );
      expect(
        csp(captchaWidgetOrigins({ type: 'RecaptchaEnterprise', siteKey: 'k', domain: 'recaptcha.net' })),
      ).to.include(
        "script-src 'self' https://recaptcha.net/recaptcha/ https://www.gstatic.com/recaptcha/ https://www.gstatic.cn/recaptcha/; frame-src https://recaptcha.net/recaptcha/;",
      );
    });
  });

  describe('configuration export and import', () => {
    it('carries the provider, its secret key only with secrets; without its key an import leaves it out, noted', async () => {
      expectStatus(await putProvider(turnstile(alwaysPasses)), 200);
      const source = openDatabase(service.config.dbUrl);
      const target = openDatabase(await freshDatabaseUrl());
      try {
        await migrateToLatest(target);
        const options = { hooksAllowPrivateTargets: true, issuer: service.config.issuer };
        const withoutSecrets = await exportConfiguration(source, { withSecrets: false });
        expect(withoutSecrets.captchaProviders?.map(({ config }) => config)).to.deep.equal([
          { type: 'Turnstile', siteKey: '1x00000000000000000000AA' },
        ]);
        const left = await importConfiguration(target, withoutSecrets, 'file.json', options);
        expect(left.notes.join('\n')).to.include('not imported, the file has no secret key');
        expect((await exportConfiguration(target, { withSecrets: true })).captchaProviders).to.deep.equal([]);

        const withSecrets = await exportConfiguration(source, { withSecrets: true });
        expect(withSecrets.captchaProviders?.[0].config).to.include({ secretKey: alwaysPasses });
        await importConfiguration(target, withSecrets, 'file.json', options);
        expect((await exportConfiguration(target, { withSecrets: true })).captchaProviders).to.deep.equal(
          withSecrets.captchaProviders,
        );
      } finally {
        await source.destroy();
        await target.destroy();
      }
    });
  });

  // Last: mocha runs a suite's own tests before its inner suites, and this reads what they all saw.
  describe('after all of the above', () => {
    it('never shows the secret key in an answer or a log line, nor the token in a log line', () => {
      expect(answers.length).to.be.above(30);
      const bodies = answers.map((response) => JSON.stringify(response.body)).join('\n');
      const logs = service.logs();
      for (const secret of [alwaysPasses, alwaysFails, recaptchaApiKey]) {
        expect(bodies).to.not.include(secret);
        expect(logs).to.not.include(secret);
      }
      expect(logs).to.not.include('token-from-the-widget');
      expect(logs).to.not.include('good-token');
    });
  });
});

describe('captcha: a social sign-in vouches for the person, as Logto skips the captcha after it', function () {
  this.timeout(120_000);
  let setting: ExternalSignIn;
  let connector: { id: string };

  before(async () => {
    setting = await startExternalSignIn('social');
    const { service, idp } = setting;
    const created = await service.api.post('connectors', {
      json: {
        connectorId: 'oidc',
        config: { issuer: idp.issuer, clientId: idp.client.id, clientSecret: idp.client.secret },
        metadata: { target: unique('oidc-') },
      },
    });
    expectStatus(created, 200);
    connector = created.body as { id: string };
    const provider = { type: 'Turnstile', siteKey: 'site-key', secretKey: alwaysPasses };
    expectStatus(await service.api.put('captcha-provider', { json: { config: provider } }), 200);
    expectStatus(await service.api.patch('sign-in-exp', { json: { captchaPolicy: { enabled: true } } }), 200);
  });
  after(() => ifSet(setting)?.stop());

  it('registers through the IdP, then signs in, without a token', async () => {
    const { service, spa, idp } = setting;
    const upstream = await createIdpUser(idp, newEmail('social'));
    for (const [event, status] of [
      ['Register', 201],
      ['SignIn', 204],
    ] as const) {
      const browser = await openExperience(service, spa.id, event);
      const { verificationId } = await verifyAtIdp(setting, browser, `social/${connector.id}`, upstream);
      expectStatus(await identify(browser, { verificationId }), status);
      await submitToApplication(browser);
    }
  });
});

describe('captcha: the secret key at rest', () => {
  let verifier: FakeVerifier;
  let service: TestService;
  before(async () => {
    verifier = await FakeVerifier.start();
    service = await startService({
      env: {
        SECRETS_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
        CAPTCHA_VERIFY_URL_TURNSTILE: `${verifier.url}/turnstile`,
      },
    });
  });
  after(async () => {
    await ifSet(service)?.stop();
    await ifSet(verifier)?.stop();
  });

  it('is sealed with SECRETS_ENCRYPTION_KEY in the database, and opened to check a token', async () => {
    const provider = { type: 'Turnstile', siteKey: 'site-key', secretKey: alwaysPasses };
    expectStatus(await service.api.put('captcha-provider', { json: { config: provider } }), 200);
    const db = openDatabase(service.config.dbUrl);
    try {
      const [row] = await db('captcha_providers').select<Array<{ config: string }>>('config');
      expect(row.config).to.not.include(alwaysPasses);
      expect(JSON.parse(row.config)).to.deep.include({ type: 'Turnstile', siteKey: 'site-key' });
      expect((JSON.parse(row.config) as { secretKey: string }).secretKey).to.match(/^enc:v1:/);
    } finally {
      await db.destroy();
    }
    expectStatus(await service.api.patch('sign-in-exp', { json: { captchaPolicy: { enabled: true } } }), 200);
    const browser = await openExperience(service, (await createSpa(service)).id, null);
    expectStatus(await browser.call('put', 'api/experience', { interactionEvent: 'SignIn', captchaToken: 't' }), 204);
    expect(verifier.asked.at(-1)?.form.get('secret')).to.equal(alwaysPasses);
  });
});
