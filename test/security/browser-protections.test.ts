import { createHash, randomBytes } from 'node:crypto';
import { expect } from 'chai';

import { Browser } from '../experience/browser.ts';
import { createSpa, redirectUri } from '../experience/experience-helpers.ts';
import { freePort, type HttpResponse, startService, type TestService } from '../support/service.ts';
import { ifSet } from '../support/values.ts';

const crossSite = 'request.cross_site_forbidden';

/** Log lines as objects. */
const logLines = (service: TestService) =>
  service
    .logs()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { level: number; msg: string });

describe('browser protections', () => {
  describe('requests authenticated by a cookie refuse other sites', () => {
    let service: TestService;
    let clientId: string;

    before(async () => {
      service = await startService();
      clientId = (await createSpa(service)).id;
    });

    after(async () => {
      await ifSet(service)?.stop();
    });

    /** A browser holding an interaction cookie, as the sign-in page has it. */
    async function signInPage(): Promise<Browser> {
      const browser = new Browser(service);
      expect((await browser.authorize(clientId, redirectUri)).location).to.equal('/sign-in');
      return browser;
    }

    const startExperience = async (browser: Browser, headers: Record<string, string>) =>
      (await browser.client.put('api/experience', {
        json: { interactionEvent: 'SignIn' },
        headers,
      })) as unknown as HttpResponse;

    it('the Experience API: another Origin, or Sec-Fetch-Site cross-site or same-site, gets 403 before the cookie is used', async () => {
      const browser = await signInPage();
      const refusedHeaders: Array<Record<string, string>> = [
        { origin: 'https://evil.example' },
        { origin: 'null' },
        // Same host, another port: another origin.
        { origin: `http://127.0.0.1:${Number(new URL(service.url).port) + 1}` },
        { 'sec-fetch-site': 'cross-site' },
        { 'sec-fetch-site': 'same-site' },
        { origin: service.config.endpoint, 'sec-fetch-site': 'cross-site' },
      ];
      for (const headers of refusedHeaders) {
        const refused = await startExperience(browser, headers);
        expect(refused.statusCode, JSON.stringify(headers)).to.equal(403);
        expect(refused.body.code).to.equal(crossSite);
        expect(refused.body.message).to.be.a('string');
      }
      // Refused requests changed nothing: the experience was never started.
      expect(
        (await browser.client.post('api/experience/submit', { headers: { origin: 'https://evil.example' } }))
          .statusCode,
      ).to.equal(403);
      expect((await browser.client.post('api/experience/submit')).body).to.deep.include({
        code: 'session.interaction_not_found',
      });
    });

    it('the Experience API: its own origin, Sec-Fetch-Site same-origin or none, and no browser headers at all (a script) pass', async () => {
      const passing: Array<Record<string, string>> = [
        { origin: service.config.endpoint },
        { 'sec-fetch-site': 'same-origin' },
        { 'sec-fetch-site': 'none' },
        { origin: service.config.endpoint, 'sec-fetch-site': 'same-origin' },
        {},
      ];
      for (const headers of passing) {
        const browser = await signInPage();
        expect((await startExperience(browser, headers)).statusCode, JSON.stringify(headers)).to.equal(204);
      }
    });

    it('reading is not refused: GET from another site still answers', async () => {
      const response = await service.http.get('api/.well-known/sign-in-exp', {
        headers: { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' },
      });
      expect(response.statusCode).to.equal(200);
    });

    it('the first-run screen refuses other sites', async () => {
      const refused = await service.http.post('api/console/first-administrator', {
        json: { username: 'cross_site_admin', password: 'Sturdy-Console-7' },
        headers: { origin: 'https://evil.example' },
      });
      expect(refused.statusCode).to.equal(403);
      expect(refused.body.code).to.equal(crossSite);
      expect((await service.http.get('api/console/config')).body.hasAdministrator).to.equal(false);
    });

    it('bearer-authenticated APIs are called from other origins and are not affected', async () => {
      const headers = { origin: 'https://app.example', 'sec-fetch-site': 'cross-site' };
      const created = await service.api.post('users', { json: { username: 'from_another_origin' }, headers });
      expect(created.statusCode).to.equal(200);
      // The Account API and /api/verifications answer for the token, not for the origin.
      const account = await service.http.post('api/verifications/password', { json: { password: 'x' }, headers });
      expect(account.statusCode).to.equal(401);
      expect((await service.http.patch('api/my-account', { json: { name: 'x' }, headers })).statusCode).to.equal(401);
    });
  });

  describe('cookies', () => {
    const cookiesOf = async (service: TestService) => {
      const browser = new Browser(service);
      const { id } = await createSpa(service);
      const challenge = createHash('sha256').update(randomBytes(32).toString('base64url')).digest('base64url');
      const query = new URLSearchParams({
        client_id: id,
        redirect_uri: redirectUri,
        response_type: 'code',
        scope: 'openid',
        code_challenge: challenge,
        code_challenge_method: 'S256',
      });
      const response = await browser.client.get(`oidc/auth?${query}`, { responseType: 'text' });
      expect(response.headers.location).to.equal('/sign-in');
      return response.headers['set-cookie'] ?? [];
    };

    it('are Secure when ENDPOINT is https, also when TLS ends at a proxy and TRUST_PROXY is off', async () => {
      const port = await freePort();
      const service = await startService({ port, env: { ENDPOINT: `https://127.0.0.1:${port}` } });
      try {
        const cookies = await cookiesOf(service);
        expect(cookies).to.have.length.above(0);
        for (const cookie of cookies) {
          expect(cookie.toLowerCase(), cookie).to.match(/; secure(;|$)/);
        }
      } finally {
        await service.stop();
      }
    });

    it('are not Secure on a plain http ENDPOINT (a browser would not send them back)', async () => {
      const service = await startService();
      try {
        for (const cookie of await cookiesOf(service)) {
          expect(cookie.toLowerCase(), cookie).to.not.match(/; secure(;|$)/);
        }
      } finally {
        await service.stop();
      }
    });
  });

  describe('a production start', () => {
    it('warns when ENDPOINT is plain http on a name that is not this machine', async () => {
      const service = await startService({
        logs: true,
        env: {
          NODE_ENV: 'production',
          ENDPOINT: 'http://identity.test',
          SMTP_URL: 'smtp://127.0.0.1:2525',
          SECRETS_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
        },
      });
      try {
        const warnings = logLines(service).filter((line) => line.level === 40);
        expect(warnings.map((line) => line.msg)).to.have.length(1);
        expect(warnings[0].msg).to.contain('ENDPOINT http://identity.test is plain http');
      } finally {
        await service.stop();
      }
    });

    it('does not warn for an http ENDPOINT on loopback', async () => {
      const service = await startService({
        logs: true,
        env: {
          NODE_ENV: 'production',
          SMTP_URL: 'smtp://127.0.0.1:2525',
          SECRETS_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
        },
      });
      try {
        expect(logLines(service).filter((line) => line.level === 40)).to.deep.equal([]);
      } finally {
        await service.stop();
      }
    });
  });
});
