import { expect } from 'chai';
import { decodeJwt, type JWTPayload } from 'jose';

import { createApplication } from '../support/fixtures.ts';
import { adminClient, startService, type TestService } from '../support/service.ts';
import { signIn } from '../support/sign-in.ts';
import { omit, unique } from '../support/values.ts';
import {
  accessTokenType,
  delegationSetup,
  exchange,
  expectIssued,
  expectOAuthError,
  signWithServiceKey,
} from '../token-exchange/support.ts';

/**
 * Only tokens the provider could have issued are accepted: signed with our key is not enough when
 * `exp`, `iat` or `jti` is missing, and the Authorization header carries exactly one bearer token
 * (RFC 6750 §2.1: `Bearer`, one space, a b64token, nothing after). Whitespace around a header value
 * is not part of it (RFC 9110 §5.5): Node drops it before we see it.
 */
describe('our access tokens: what the management API, the Account API and token exchange accept', () => {
  let service: TestService;
  let managementToken: string;

  before(async () => {
    service = await startService();
    const response = await service.token(adminClient.id, adminClient.secret, {
      grant_type: 'client_credentials',
      resource: service.config.managementApiResource,
      scope: 'all',
    });
    managementToken = String(response.body.access_token);
  });
  after(() => service.stop());

  const listApplications = (authorization: string) =>
    service.http.get('api/applications', { headers: { authorization } });

  async function expectUnauthorized(authorization: string): Promise<void> {
    const response = await listApplications(authorization);
    expect(response.statusCode, `${authorization.slice(0, 40)}…: ${JSON.stringify(response.body)}`).to.equal(401);
    expect(response.body.code)
      .to.be.a('string')
      .and.match(/^auth\./);
  }

  /** The claims of the bootstrap admin's real management token, re-signed after `change`. */
  const resigned = (change: (claims: JWTPayload) => void) => {
    const claims = { ...decodeJwt(managementToken) };
    change(claims);
    return signWithServiceKey(service, claims);
  };

  describe('claims: a token signed with our key must still look issued by us', () => {
    it('accepts the real token and the same claims signed again with our key (the control)', async () => {
      expect((await listApplications(`Bearer ${managementToken}`)).statusCode).to.equal(200);
      expect((await listApplications(`Bearer ${await resigned(() => undefined)}`)).statusCode).to.equal(200);
    });

    it('refuses a management token without exp with 401', async () => {
      await expectUnauthorized(`Bearer ${await resigned((claims) => delete claims.exp)}`);
    });

    it('refuses a management token without iat with 401', async () => {
      await expectUnauthorized(`Bearer ${await resigned((claims) => delete claims.iat)}`);
    });

    it('refuses a management token without jti (it could never be revoked) with 401', async () => {
      await expectUnauthorized(`Bearer ${await resigned((claims) => delete claims.jti)}`);
    });

    it('refuses a management token issued in the future with 401', async () => {
      await expectUnauthorized(
        `Bearer ${await resigned((claims) => (claims.iat = Math.floor(Date.now() / 1000) + 600))}`,
      );
    });

    it('refuses a management token living longer than any resource allows (30 days) with 401', async () => {
      await expectUnauthorized(`Bearer ${await resigned((claims) => (claims.exp = claims.iat! + 31 * 86_400))}`);
    });
  });

  describe('the Authorization header at the management API', () => {
    it('accepts the scheme in any case (RFC 7235)', async () => {
      expect((await listApplications(`bearer ${managementToken}`)).statusCode).to.equal(200);
    });

    for (const [name, header] of [
      ['a second bearer after the token', (token: string) => `Bearer ${token} Bearer b`],
      ['anything after the token', (token: string) => `Bearer ${token} x`],
      ['two spaces after Bearer', (token: string) => `Bearer  ${token}`],
      ['a tab instead of the space', (token: string) => `Bearer\t${token}`],
      ['a comma-separated second token', (token: string) => `Bearer ${token},${token}`],
    ] as const) {
      it(`refuses ${name} with 401`, async () => {
        await expectUnauthorized(header(managementToken));
      });
    }

    it('refuses `Bearer a Bearer b` with 401', async () => {
      await expectUnauthorized('Bearer a Bearer b');
    });
  });

  describe('the Authorization header at the Account API', () => {
    it('accepts one bearer token and refuses a second one after it', async () => {
      const application = await createApplication(service, 'SPA', {
        oidcClientMetadata: { redirectUris: ['http://app.test/callback'], postLogoutRedirectUris: [] },
      });
      const username = unique('acc');
      const password = 'Sturdy-Tulip-7';
      expect((await service.api.post('users', { json: { username, password } })).statusCode).to.equal(200);
      const { access_token: token } = await signIn(
        service,
        { clientId: application.id, redirectUri: 'http://app.test/callback' },
        { username, password },
        { scope: 'openid' },
      );

      const ok = await service.http.get('api/my-account', { headers: { authorization: `Bearer ${token}` } });
      expect(ok.statusCode, JSON.stringify(ok.body)).to.equal(200);
      for (const header of [`Bearer ${token} Bearer b`, `Bearer ${token} x`, `Bearer  ${token}`]) {
        const refused = await service.http.get('api/my-account', { headers: { authorization: header } });
        expect(refused.statusCode, header).to.equal(401);
      }
    });
  });

  describe('subject tokens at token exchange', () => {
    it('refuses a user token without exp or iat, though signed with our key', async () => {
      const setup = await delegationSetup(service);
      const now = Math.floor(Date.now() / 1000);
      const claims: JWTPayload = {
        iss: service.config.issuer,
        sub: setup.user.id,
        aud: setup.apiA.resource.indicator,
        client_id: setup.frontend.id,
        scope: 'read:a',
        jti: `jti-${Math.random()}`,
        iat: now,
        exp: now + 600,
      };
      const form = (token: string) => ({
        subject_token: token,
        subject_token_type: accessTokenType,
        resource: setup.apiB.resource.indicator,
        scope: 'read:b',
      });
      expectIssued(await exchange(service, setup.backend, form(await signWithServiceKey(service, claims))));

      expectOAuthError(
        await exchange(service, setup.backend, form(await signWithServiceKey(service, omit(claims, 'exp')))),
        400,
        'invalid_request',
        /subject_token.*exp/,
      );
      expectOAuthError(
        await exchange(service, setup.backend, form(await signWithServiceKey(service, omit(claims, 'iat')))),
        400,
        'invalid_request',
        /subject_token.*iat/,
      );
    });
  });
});
