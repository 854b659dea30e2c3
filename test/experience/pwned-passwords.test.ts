import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';

import { accountApi } from '../support/account-api.ts';
import { expectStatus } from '../support/expect.ts';
import { type HttpResponse, startService, type TestService } from '../support/service.ts';
import { ifSet, unique } from '../support/values.ts';
import { Browser } from './browser.ts';
import {
  createSpa,
  createUser,
  identify,
  newEmail,
  openExperience,
  passwordVerification,
  redirectUri,
  verifyEmail,
} from './experience-helpers.ts';

const sha1 = (text: string) => createHash('sha1').update(text, 'utf8').digest('hex').toUpperCase();

/** Passwords that pass every other rule of the default policy. */
const breached = 'Summer-Harbor-83';
const clean = 'Velvet-Orchard-62';
/** Breached, and made of a sequence and a repetition. */
const breachedWeak = 'abcdef-999';
/** In the range answer with a count of 0: padding (Add-Padding), not a breach. */
const padded = 'Granite-Willow-17';

/**
 * A local stand-in for Have I Been Pwned's range API: `GET /range/<5 hex>` answers `SUFFIX:COUNT`
 * lines. It remembers the paths asked, and can be told to fail (hang, reset, 503).
 */
class FakeRangeServer {
  readonly paths: string[] = [];
  mode: 'answer' | 'hang' | 'reset' | 'unavailable' = 'answer';

  private readonly server: Server;

  private constructor(server: Server) {
    this.server = server;
  }

  static async start(): Promise<FakeRangeServer> {
    const server = createServer();
    const fake = new FakeRangeServer(server);
    server.on('request', (request, response) => {
      fake.paths.push(request.url ?? '');
      if (fake.mode === 'hang') {
        return; // never answers; the socket is closed when the server stops
      }
      if (fake.mode === 'reset') {
        request.socket.destroy();
        return;
      }
      if (fake.mode === 'unavailable') {
        response.writeHead(503).end();
        return;
      }
      const prefix = /^\/range\/([0-9A-F]{5})$/.exec(request.url ?? '')?.[1];
      const lines = [
        `${'0'.repeat(35)}:3`,
        ...[breached, breachedWeak, padded]
          .map(sha1)
          .filter((hash) => hash.startsWith(prefix ?? '-'))
          .map((hash) => `${hash.slice(5)}:${hash === sha1(padded) ? 0 : 52_341}`),
        `${'F'.repeat(35)}:0`,
      ];
      response.writeHead(200, { 'content-type': 'text/plain' }).end(lines.join('\r\n'));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return fake;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

const rejectedAsPwned = (response: HttpResponse) => {
  expect(response.statusCode, JSON.stringify(response.body)).to.equal(422);
  expect(response.body.code).to.equal('password.rejected');
  expect(response.body.data.issues).to.deep.include({ code: 'password_rejected.pwned' });
};

describe('password policy: rejects.pwned asks a breached-password range API (k-anonymity)', () => {
  let range: FakeRangeServer;
  let service: TestService;
  let spa: { id: string };
  before(async () => {
    range = await FakeRangeServer.start();
    service = await startService({ logs: true, env: { PWNED_PASSWORDS_URL: range.url } });
    spa = await createSpa(service);
  });
  after(async () => {
    await ifSet(service)?.stop();
    await ifSet(range)?.stop();
  });
  afterEach(() => {
    range.mode = 'answer';
  });

  const setPwned = async (pwned: boolean) =>
    expectStatus(
      await service.api.patch('sign-in-exp', {
        json: {
          passwordPolicy: { rejects: { pwned, repetitionAndSequence: true, userInfo: true, words: [] } },
        },
      }),
      200,
    );
  const newPasswordIdentity = async (password: string) => {
    const browser = await openExperience(service, spa.id, 'Register');
    return browser.call('post', 'api/experience/verification/new-password-identity', {
      identifier: { type: 'username', value: unique('newcomer') },
      password,
    });
  };

  it('is off by default: nothing is asked and a breached password is accepted', async () => {
    expectStatus(await newPasswordIdentity(breached), 200);
    expect(range.paths).to.deep.equal([]);
  });

  describe('when on', () => {
    before(() => setPwned(true));
    after(() => setPwned(false));

    it('refuses a breached password at sign-up (422 password.rejected, password_rejected.pwned), sending only 5 hex digits', async () => {
      const before = range.paths.length;
      rejectedAsPwned(await newPasswordIdentity(breached));
      expect(range.paths.slice(before)).to.deep.equal([`/range/${sha1(breached).slice(0, 5)}`]);

      expectStatus(await newPasswordIdentity(clean), 200);
      // A suffix the range lists with a count of 0 is padding, not a breach.
      expectStatus(await newPasswordIdentity(padded), 200);
    });

    it('lists the breach with the other issues', async () => {
      const response = await newPasswordIdentity(breachedWeak);
      expect(response.statusCode).to.equal(422);
      expect(response.body.data.issues).to.deep.equal([
        { code: 'password_rejected.pwned' },
        { code: 'password_rejected.restricted.sequence' },
        { code: 'password_rejected.restricted.repetition' },
      ]);
    });

    it('refuses it for a password reset, and for a password a sign-in adds to the profile', async () => {
      const email = newEmail('reset');
      await createUser(service, { username: unique('resetter'), primaryEmail: email, password: clean });
      const reset = await openExperience(service, spa.id, 'ForgotPassword');
      expectStatus(
        await identify(reset, { verificationId: await verifyEmail(service, reset, email, 'ForgotPassword') }),
        204,
      );
      rejectedAsPwned(await reset.call('put', 'api/experience/profile/password', { password: breached }));
      expectStatus(await reset.call('put', 'api/experience/profile/password', { password: 'Amber-Lantern-29' }), 204);

      const passwordless = newEmail('nopass');
      await createUser(service, { username: unique('nopass'), primaryEmail: passwordless });
      const signIn = await openExperience(service, spa.id);
      expectStatus(
        await identify(signIn, { verificationId: await verifyEmail(service, signIn, passwordless, 'SignIn') }),
        204,
      );
      rejectedAsPwned(await signIn.call('post', 'api/experience/profile', { type: 'password', value: breached }));
    });

    it('refuses it through the management API (create, set password) and the Account API', async () => {
      rejectedAsPwned(await service.api.post('users', { json: { username: unique('managed'), password: breached } }));
      const user = await createUser(service, { username: unique('managed'), password: clean });
      rejectedAsPwned(await service.api.patch(`users/${user.id}/password`, { json: { password: breached } }));

      const token = await accessToken(service, spa.id, user.username!, clean);
      const call = accountApi(service, token);
      const proof = (await call('post', 'verifications/password', { password: clean })).body.verificationRecordId;
      rejectedAsPwned(await call('post', 'my-account/password', { password: breached }, proof));
      expectStatus(await call('post', 'my-account/password', { password: 'Amber-Lantern-29' }, proof), 204);
    });

    for (const [mode, reason] of [
      ['unavailable', 'answered 503'],
      ['reset', 'fetch failed'],
      ['hang', 'no answer within 2000 ms'],
    ] as const) {
      it(`fails open when the range API is ${mode === 'hang' ? 'slow' : mode}: the password passes, a warning is logged without it or its hash`, async () => {
        range.mode = mode;
        const started = Date.now();
        expectStatus(await newPasswordIdentity(breached), 200);
        expect(Date.now() - started).to.be.below(4000);
        const warning = service
          .logs()
          .split('\n')
          .filter((line) => line.includes('breached-password lookup failed'))
          .map((line) => JSON.parse(line) as Record<string, unknown>)
          .find((line) => String(line.reason).startsWith(reason));
        expect(warning, service.logs().slice(-2000)).to.not.equal(undefined);
        expect(warning).to.include({ service: range.url });
        const logs = service.logs();
        expect(logs).to.not.include(breached);
        expect(logs).to.not.include(sha1(breached).slice(0, 5));
        expect(logs.toLowerCase()).to.not.include(sha1(breached).slice(5).toLowerCase());
      });
    }
  });
});

/** The user's opaque access token (scope openid), through a real sign-in: the Account API's credential. */
async function accessToken(service: TestService, clientId: string, username: string, password: string) {
  const browser = new Browser(service);
  const { verifier } = await browser.authorize(clientId, redirectUri, { scope: 'openid profile' });
  expectStatus(await browser.call('put', 'api/experience', { interactionEvent: 'SignIn' }), 204);
  const proof = await passwordVerification(browser, { type: 'username', value: username }, password);
  expectStatus(await identify(browser, { verificationId: proof.body.verificationId }), 204);
  const done = await browser.call('post', 'api/experience/submit');
  expectStatus(done, 200);
  const landed = await browser.followToApplication(done.body.redirectTo);
  const tokens = await service.http.post('oidc/token', {
    form: {
      grant_type: 'authorization_code',
      code: landed.searchParams.get('code')!,
      code_verifier: verifier,
      client_id: clientId,
      redirect_uri: redirectUri,
    },
  });
  expectStatus(tokens, 200);
  return String(tokens.body.access_token);
}
