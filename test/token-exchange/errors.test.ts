import { expect } from 'chai';
import { generateKeyPair, type JWTPayload, SignJWT } from 'jose';

import { openDatabase } from '../../lib/storage/database.ts';
import { createApplication } from '../support/fixtures.ts';
import { startService, type TestService } from '../support/service.ts';
import {
  accessTokenType,
  delegationSetup,
  exchange,
  expectIssued,
  expectOAuthError,
  signWithServiceKey,
  tokenExchange,
  userAccessToken,
  userTokens,
  userWithApiBRole,
} from './support.ts';

const notAllowed = 'token exchange is not allowed for this application';
/** Logto's words for the same refusal (its grant refuses third-party applications first). */
const thirdPartyRefused = 'third-party applications are not allowed for this grant type';

/**
 * Every refusal of the token exchange grant, with its status, `error` and `error_description` (the
 * table in docs/token-exchange.md), and the order of the checks (the first failing check answers).
 */
describe('token exchange: refusals and their order', () => {
  let service: TestService;
  let setup: Awaited<ReturnType<typeof delegationSetup>>;
  let subjectToken: string;
  let disabled: { id: string; secret: string };

  before(async () => {
    service = await startService();
    setup = await delegationSetup(service);
    subjectToken = await userAccessToken(service, setup.frontend.id, setup.user, setup.apiA.resource.indicator);
    disabled = await createApplication(service, 'Traditional', {
      oidcClientMetadata: { redirectUris: ['http://disabled.test/cb'], postLogoutRedirectUris: [] },
    });
  });
  after(() => service.stop());

  const apiB = () => setup.apiB.resource.indicator;
  /** A complete, valid request; tests remove or spoil one field. */
  const valid = () => ({
    subject_token: subjectToken,
    subject_token_type: accessTokenType,
    resource: apiB(),
    scope: 'read:b',
  });
  const without = (form: Record<string, string>, ...names: string[]) =>
    Object.fromEntries(Object.entries(form).filter(([name]) => !names.includes(name)));
  const backend = () => setup.backend;
  /** A public client authenticates with its client_id in the body and no secret. */
  const asPublicClient = (clientId: string, form: Record<string, string>) =>
    service.http.post('oidc/token', { form: { grant_type: tokenExchange, client_id: clientId, ...form } });

  const freshUser = () => userWithApiBRole(service, setup);

  /** Claims of a user access token the service would issue, for tokens the tests sign themselves. */
  const userClaims = (overrides: JWTPayload = {}): JWTPayload => {
    const now = Math.floor(Date.now() / 1000);
    return {
      iss: service.config.issuer,
      sub: setup.user.id,
      aud: setup.apiA.resource.indicator,
      client_id: setup.frontend.id,
      scope: 'read:a',
      jti: `jti-${Math.random()}`,
      iat: now,
      exp: now + 600,
      ...overrides,
    };
  };

  it('succeeds for the valid request the refusals below start from', async () => {
    expect(expectIssued(await exchange(service, backend(), valid())).scope).to.equal('read:b');
  });

  describe('1. client authentication', () => {
    it('refuses a wrong secret with 401 invalid_client and a Basic challenge', async () => {
      const response = await exchange(service, { id: backend().id, secret: 'not-the-secret' }, valid());
      expectOAuthError(response, 401, 'invalid_client');
      expect(String(response.headers['www-authenticate'])).to.match(/^Basic /);
    });

    it('refuses an unknown client id with 401 invalid_client', async () => {
      const response = await exchange(service, { id: 'no-such-application', secret: 'whatever' }, valid());
      expectOAuthError(response, 401, 'invalid_client');
    });

    it('refuses a confidential client that sends no secret with 401 invalid_client', async () => {
      expectOAuthError(await asPublicClient(backend().id, valid()), 401, 'invalid_client');
    });
  });

  describe('2. the application may exchange', () => {
    it('refuses a Traditional application with token exchange disabled (the default)', async () => {
      const response = await exchange(service, disabled, valid());
      expectOAuthError(response, 400, 'unauthorized_client', notAllowed);
    });

    it('refuses a Traditional application registered without redirect URIs, switch off, with unauthorized_client', async () => {
      const bare = await createApplication(service, 'Traditional');
      expectOAuthError(await exchange(service, bare, valid()), 400, 'unauthorized_client', notAllowed);
    });

    it('refuses a MachineToMachine application with token exchange disabled', async () => {
      const machine = await createApplication(service, 'MachineToMachine');
      expectOAuthError(await exchange(service, machine, valid()), 400, 'unauthorized_client', notAllowed);
    });

    it('refuses a third-party application, saying so', async () => {
      const partner = await createApplication(service, 'Traditional', {
        isThirdParty: true,
        oidcClientMetadata: { redirectUris: ['http://partner.test/cb'], postLogoutRedirectUris: [] },
      });
      expectOAuthError(await exchange(service, partner, valid()), 400, 'unauthorized_client', thirdPartyRefused);
    });

    it('refuses a third-party application even with the switch stored on (saved before it was refused)', async () => {
      const partner = await createApplication(service, 'Traditional', {
        isThirdParty: true,
        oidcClientMetadata: { redirectUris: ['http://partner.test/cb'], postLogoutRedirectUris: [] },
      });
      const db = openDatabase(service.config.dbUrl);
      try {
        await db('applications')
          .where({ id: partner.id })
          .update({ custom_client_metadata: JSON.stringify({ allowTokenExchange: true }) });
      } finally {
        await db.destroy();
      }
      // The management API bumps the applications cache on a write; this write went around it.
      const other = await startService({ dbUrl: service.config.dbUrl, env: { ENDPOINT: service.config.endpoint } });
      try {
        expect((await other.api.get(`applications/${partner.id}`)).body.customClientMetadata).to.include({
          allowTokenExchange: true,
        });
        expectOAuthError(await exchange(other, partner, valid()), 400, 'unauthorized_client', thirdPartyRefused);
      } finally {
        await other.stop();
      }
    });

    it('refuses an SPA (a public client, client_id only)', async () => {
      expectOAuthError(await asPublicClient(setup.frontend.id, valid()), 400, 'unauthorized_client', notAllowed);
    });

    it('refuses a Native application (a public client)', async () => {
      const native = await createApplication(service, 'Native', {
        oidcClientMetadata: { redirectUris: ['com.example.app://callback'], postLogoutRedirectUris: [] },
      });
      expectOAuthError(await asPublicClient(native.id, valid()), 400, 'unauthorized_client', notAllowed);
    });
  });

  describe('3. subject_token and subject_token_type present', () => {
    it('refuses a missing subject_token, naming it', async () => {
      const response = await exchange(service, backend(), without(valid(), 'subject_token'));
      expectOAuthError(response, 400, 'invalid_request', /subject_token(?!_type)/);
    });

    it('refuses an empty subject_token as missing', async () => {
      const response = await exchange(service, backend(), { ...valid(), subject_token: '' });
      expectOAuthError(response, 400, 'invalid_request', /subject_token(?!_type)/);
    });

    it('refuses a missing subject_token_type, naming it', async () => {
      const response = await exchange(service, backend(), without(valid(), 'subject_token_type'));
      expectOAuthError(response, 400, 'invalid_request', /subject_token_type/);
    });

    it('names subject_token first when both are missing', async () => {
      const response = await exchange(service, backend(), without(valid(), 'subject_token', 'subject_token_type'));
      expectOAuthError(response, 400, 'invalid_request', /subject_token(?!_type)/);
    });
  });

  describe('4. subject_token_type is supported', () => {
    for (const type of [
      'urn:ietf:params:oauth:token-type:id_token',
      'urn:ietf:params:oauth:token-type:refresh_token',
      'urn:ietf:params:oauth:token-type:jwt',
      'access_token',
    ]) {
      it(`refuses subject_token_type ${type}`, async () => {
        const response = await exchange(service, backend(), { ...valid(), subject_token_type: type });
        expectOAuthError(response, 400, 'invalid_request', 'unsupported subject_token_type');
      });
    }
  });

  describe('5. the subject token is valid', () => {
    const refused = async (token: string, description: RegExp) => {
      const response = await exchange(service, backend(), { ...valid(), subject_token: token });
      expectOAuthError(response, 400, 'invalid_request', description);
      return String(response.body.error_description);
    };

    it('refuses a garbage string', async () => {
      await refused('certainly-not-a-token', /subject_token.*(invalid|unknown|not)/i);
    });

    it('refuses a garbage string shaped like a JWT', async () => {
      await refused('abc.def.ghi', /subject_token.*malformed/i);
    });

    it('refuses a JWT signed by another key', async () => {
      const { privateKey } = await generateKeyPair('ES256');
      const forged = await new SignJWT(userClaims())
        .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid: 'forged' })
        .sign(privateKey);
      await refused(forged, /signature/i);
    });

    it('refuses a JWT signed by another key that claims our key id', async () => {
      const { privateKey } = await generateKeyPair('ES256');
      const { kid } = JSON.parse(Buffer.from(subjectToken.split('.')[0], 'base64url').toString()) as { kid: string };
      const forged = await new SignJWT(userClaims())
        .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid })
        .sign(privateKey);
      await refused(forged, /signature/i);
    });

    it('refuses an unsigned JWT (alg none)', async () => {
      const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
      const unsigned = `${encode({ alg: 'none', typ: 'at+jwt' })}.${encode(userClaims())}.`;
      await refused(unsigned, /subject_token/);
    });

    it('refuses our token with a tampered signature', async () => {
      const [header, payload, signature] = subjectToken.split('.') as [string, string, string];
      const bytes = Buffer.from(signature, 'base64url');
      bytes[10] = bytes[10] ^ 0xff;
      await refused(`${header}.${payload}.${bytes.toString('base64url')}`, /signature/i);
    });

    it('refuses our token with a tampered payload (another sub)', async () => {
      const [header, , signature] = subjectToken.split('.') as [string, string, string];
      const payload = Buffer.from(JSON.stringify(userClaims({ sub: 'someone-else' }))).toString('base64url');
      await refused(`${header}.${payload}.${signature}`, /signature/i);
    });

    it('refuses an ID token of ours (typ is not at+jwt)', async () => {
      const { id_token: idToken } = await userTokens(
        service,
        setup.frontend.id,
        setup.user,
        setup.apiA.resource.indicator,
      );
      expect(idToken.split('.')).to.have.length(3);
      await refused(idToken, /not an access token|ID token|typ/i);
    });

    it('refuses a client credentials token of ours (no user subject)', async () => {
      const machine = await createApplication(service, 'MachineToMachine', {
        customClientMetadata: { allowTokenExchange: true },
      });
      const issued = await service.token(machine.id, machine.secret, {
        grant_type: 'client_credentials',
        resource: apiB(),
      });
      expect(issued.statusCode).to.equal(200);
      const description = await refused(String(issued.body.access_token), /user subject|client credentials/i);
      expect(description).not.to.match(/signature|expired|issuer/);
      // The same refusal when the machine exchanges its own token.
      const own = await exchange(service, machine, { ...valid(), subject_token: String(issued.body.access_token) });
      expectOAuthError(own, 400, 'invalid_request', /user subject|client credentials/i);
    });

    it('refuses an opaque client credentials token of ours (no resource, so not a JWT)', async () => {
      const machine = await createApplication(service, 'MachineToMachine', {
        customClientMetadata: { allowTokenExchange: true },
      });
      const issued = await service.token(machine.id, machine.secret, { grant_type: 'client_credentials' });
      expect(issued.statusCode).to.equal(200);
      expect(String(issued.body.access_token).split('.')).to.have.length(1);
      await refused(String(issued.body.access_token), /subject_token/);
    });

    it('accepts a token signed with the service key (control for the self-signed tokens below)', async () => {
      const token = await signWithServiceKey(service, userClaims());
      expect(expectIssued(await exchange(service, backend(), { ...valid(), subject_token: token })).scope).to.equal(
        'read:b',
      );
    });

    it('refuses an expired token (10 s past exp, beyond the 5 s clock tolerance)', async () => {
      const now = Math.floor(Date.now() / 1000);
      const token = await signWithServiceKey(service, userClaims({ iat: now - 610, exp: now - 10 }));
      await refused(token, /expired/i);
    });

    it('refuses a token of another issuer signed with our key', async () => {
      const token = await signWithServiceKey(service, userClaims({ iss: 'http://other.test/oidc' }));
      await refused(token, /issuer/i);
    });

    it('refuses a user token from another instance (same database and keys, another ENDPOINT): other issuer', async () => {
      const other = await startService({ dbUrl: service.config.dbUrl, env: { ENDPOINT: 'http://other.test' } });
      try {
        const token = await userAccessToken(other, setup.frontend.id, setup.user, setup.apiA.resource.indicator);
        const payload = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()) as JWTPayload;
        expect(payload.iss).to.equal('http://other.test/oidc');
        expect(payload.sub).to.equal(setup.user.id);
        // Well signed (the keys are shared), but issued by another issuer.
        const description = await refused(token, /issuer/i);
        expect(description).not.to.match(/signature/i);
      } finally {
        await other.stop();
      }
    });

    it('refuses an opaque user access token after the front end revoked it', async () => {
      const opaque = await userAccessToken(service, setup.frontend.id, setup.user);
      expectIssued(await exchange(service, backend(), { ...valid(), subject_token: opaque }));
      const revocation = await service.http.post('oidc/token/revocation', {
        form: { token: opaque, token_type_hint: 'access_token', client_id: setup.frontend.id },
      });
      expect(revocation.statusCode, JSON.stringify(revocation.body)).to.equal(200);
      await refused(opaque, /revoked/i);
    });

    it('says which: each kind of invalid token has its own description', async () => {
      const { privateKey } = await generateKeyPair('ES256');
      const now = Math.floor(Date.now() / 1000);
      const { id_token: idToken } = await userTokens(
        service,
        setup.frontend.id,
        setup.user,
        setup.apiA.resource.indicator,
      );
      const machine = await createApplication(service, 'MachineToMachine');
      const machineToken = String(
        (await service.token(machine.id, machine.secret, { grant_type: 'client_credentials', resource: apiB() })).body
          .access_token,
      );
      const descriptions = await Promise.all([
        refused('abc.def.ghi', /./),
        refused(
          await new SignJWT(userClaims()).setProtectedHeader({ alg: 'ES256', typ: 'at+jwt' }).sign(privateKey),
          /./,
        ),
        refused(idToken, /./),
        refused(machineToken, /./),
        refused(await signWithServiceKey(service, userClaims({ iat: now - 610, exp: now - 10 })), /./),
        refused(await signWithServiceKey(service, userClaims({ iss: 'http://other.test/oidc' })), /./),
      ]);
      expect(new Set(descriptions).size, descriptions.join(' | ')).to.equal(descriptions.length);
    });
  });

  describe('6. the subject user is active', () => {
    it('refuses the token of a deleted user', async () => {
      const user = await freshUser();
      expectIssued(await exchange(service, backend(), { ...valid(), subject_token: user.token }));
      expect((await service.api.delete(`users/${user.id}`)).statusCode).to.equal(204);
      const response = await exchange(service, backend(), { ...valid(), subject_token: user.token });
      expectOAuthError(response, 400, 'invalid_request', 'the subject user does not exist (deleted)');
    });

    it('refuses a well-signed token for a user who never existed as deleted', async () => {
      const token = await signWithServiceKey(service, userClaims({ sub: 'no-such-user' }));
      expectOAuthError(
        await exchange(service, backend(), { ...valid(), subject_token: token }),
        400,
        'invalid_request',
        /does not exist/,
      );
    });

    it('refuses the token of a suspended user, and accepts it again after reactivation', async () => {
      const user = await freshUser();
      expect(
        (await service.api.patch(`users/${user.id}/is-suspended`, { json: { isSuspended: true } })).statusCode,
      ).to.equal(200);
      const response = await exchange(service, backend(), { ...valid(), subject_token: user.token });
      expectOAuthError(response, 400, 'invalid_request', /suspended/);
      expect(
        (await service.api.patch(`users/${user.id}/is-suspended`, { json: { isSuspended: false } })).statusCode,
      ).to.equal(200);
      expectIssued(await exchange(service, backend(), { ...valid(), subject_token: user.token }));
    });
  });

  describe('7. the resource is a known API', () => {
    it('refuses a missing resource', async () => {
      const response = await exchange(service, backend(), without(valid(), 'resource'));
      expectOAuthError(response, 400, 'invalid_target', /resource/);
    });

    it('refuses a relative resource', async () => {
      const response = await exchange(service, backend(), { ...valid(), resource: '/api-b' });
      expectOAuthError(response, 400, 'invalid_target', /absolute/);
    });

    it('refuses a resource with a fragment', async () => {
      const response = await exchange(service, backend(), { ...valid(), resource: `${apiB()}#part` });
      expectOAuthError(response, 400, 'invalid_target', /fragment/);
    });

    it('refuses an unknown resource, naming it', async () => {
      const response = await exchange(service, backend(), { ...valid(), resource: 'https://unknown-api.example.com' });
      expectOAuthError(response, 400, 'invalid_target', /https:\/\/unknown-api\.example\.com/);
    });

    it('gives missing, malformed and unknown resources distinct descriptions', async () => {
      const descriptions = await Promise.all(
        [
          without(valid(), 'resource'),
          { ...valid(), resource: 'api-b' },
          { ...valid(), resource: 'https://unknown-api.example.com' },
        ].map(async (form) => String((await exchange(service, backend(), form)).body.error_description)),
      );
      expect(new Set(descriptions).size, descriptions.join(' | ')).to.equal(3);
    });
  });

  describe('the order of the checks', () => {
    it('client authentication before the application check: a wrong secret of a disabled app is 401', async () => {
      expectOAuthError(await exchange(service, { id: disabled.id, secret: 'wrong' }, valid()), 401, 'invalid_client');
    });

    it('client authentication before the parameters: a wrong secret with nothing else is 401', async () => {
      expectOAuthError(await exchange(service, { id: backend().id, secret: 'wrong' }, {}), 401, 'invalid_client');
    });

    it('the application before the parameters: a disabled app with a missing subject_token gets unauthorized_client', async () => {
      expectOAuthError(
        await exchange(service, disabled, without(valid(), 'subject_token')),
        400,
        'unauthorized_client',
        notAllowed,
      );
    });

    it('the application before everything else: an SPA with no parameters gets unauthorized_client', async () => {
      expectOAuthError(await asPublicClient(setup.frontend.id, {}), 400, 'unauthorized_client', notAllowed);
    });

    it('presence before type: missing subject_token with an unsupported type names subject_token', async () => {
      const response = await exchange(service, backend(), {
        subject_token_type: 'urn:ietf:params:oauth:token-type:id_token',
        resource: apiB(),
      });
      expectOAuthError(response, 400, 'invalid_request', /subject_token(?!_type)/);
    });

    it('presence before the resource: missing subject_token with an unknown resource is invalid_request', async () => {
      const response = await exchange(service, backend(), {
        subject_token_type: accessTokenType,
        resource: 'https://unknown-api.example.com',
      });
      expectOAuthError(response, 400, 'invalid_request', /subject_token(?!_type)/);
    });

    it('type before the token: an unsupported type with a garbage token says unsupported subject_token_type', async () => {
      const response = await exchange(service, backend(), {
        ...valid(),
        subject_token: 'garbage',
        subject_token_type: 'urn:ietf:params:oauth:token-type:id_token',
      });
      expectOAuthError(response, 400, 'invalid_request', 'unsupported subject_token_type');
    });

    it('the token before the resource: a bad subject token with a missing resource is invalid_request', async () => {
      const response = await exchange(service, backend(), {
        subject_token: 'abc.def.ghi',
        subject_token_type: accessTokenType,
      });
      expectOAuthError(response, 400, 'invalid_request', /subject_token/);
    });

    it('the token before the resource: a revoked-or-unknown opaque token with a malformed resource is invalid_request', async () => {
      const response = await exchange(service, backend(), {
        ...valid(),
        subject_token: 'unknown-opaque',
        resource: 'relative#x',
      });
      expectOAuthError(response, 400, 'invalid_request', /subject_token/);
    });

    it('the user before the resource: a suspended user with an unknown resource is invalid_request (suspended)', async () => {
      const user = await freshUser();
      await service.api.patch(`users/${user.id}/is-suspended`, { json: { isSuspended: true } });
      const response = await exchange(service, backend(), {
        ...valid(),
        subject_token: user.token,
        resource: 'https://unknown-api.example.com',
      });
      expectOAuthError(response, 400, 'invalid_request', /suspended/);
    });

    it('the user before the resource: a deleted user with a missing resource is invalid_request (deleted)', async () => {
      const user = await freshUser();
      await service.api.delete(`users/${user.id}`);
      const response = await exchange(
        service,
        backend(),
        without({ ...valid(), subject_token: user.token }, 'resource'),
      );
      expectOAuthError(response, 400, 'invalid_request', 'the subject user does not exist (deleted)');
    });
  });
});
