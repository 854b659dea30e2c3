import { expect } from 'chai';
import { generateKeyPair, SignJWT } from 'jose';
import * as client from 'openid-client';

import { createApplication } from '../support/fixtures.ts';
import { startService, type TestService } from '../support/service.ts';
import { ifSet, unique } from '../support/values.ts';
import {
  accessTokenType,
  claimsOf,
  delegationSetup,
  exchange,
  expectIssued,
  expectOAuthError,
  impersonationTokenType,
  signWithServiceKey,
  userAccessToken,
  userTokens,
} from '../token-exchange/support.ts';

/**
 * RFC 7662 for our JWT access tokens at /oidc/token/introspection: an authenticated client learns
 * whether a token is active and, when it is, its claims. Anything else (expired, revoked, signed by
 * someone else, not a token at all) is `{"active": false}`, never an error. Revocation (RFC 7009)
 * is seen at once, on every instance. A resource server uses openid-client here, as it would.
 */
describe('introspection of JWT access tokens', () => {
  let service: TestService;
  let other: TestService;
  let setup: Awaited<ReturnType<typeof delegationSetup>>;
  /** API B's resource server: a confidential application that only introspects. */
  let resourceServer: { id: string; secret: string };
  let userToken: string;

  before(async () => {
    service = await startService();
    other = await startService({ dbUrl: service.config.dbUrl, env: { ENDPOINT: service.config.endpoint } });
    setup = await delegationSetup(service);
    resourceServer = await createApplication(service, 'MachineToMachine');
    userToken = await userAccessToken(service, setup.frontend.id, setup.user, setup.apiA.resource.indicator);
  });
  after(async () => {
    await ifSet(other)?.stop();
    await ifSet(service)?.stop();
  });

  const issuer = () => service.config.issuer;

  /**
   * openid-client configured for a confidential client. Both instances share one issuer, whose
   * metadata names the first one's endpoints: the other instance is reached with raw HTTP.
   */
  async function configure(credentials: { id: string; secret: string }) {
    return client.discovery(new URL(issuer()), credentials.id, credentials.secret, undefined, {
      // eslint-disable-next-line @typescript-eslint/no-deprecated -- deprecated only to stand out: the test service is plain http on 127.0.0.1
      execute: [client.allowInsecureRequests],
    });
  }

  const introspect = async (token: string, credentials = resourceServer) =>
    client.tokenIntrospection(await configure(credentials), token);

  /** The raw answer, to see exactly what the service sends. */
  const introspectRaw = (token: string, credentials = resourceServer, at: TestService = service) =>
    at.http.post('oidc/token/introspection', {
      form: { token },
      headers: { authorization: `Basic ${Buffer.from(`${credentials.id}:${credentials.secret}`).toString('base64')}` },
    });

  async function expectInactive(token: string, at: TestService = service) {
    const response = await introspectRaw(token, resourceServer, at);
    expect(response.statusCode, JSON.stringify(response.body)).to.equal(200);
    expect(response.body).to.deep.equal({ active: false });
    expect(String(response.headers['cache-control'])).to.include('no-store');
  }

  describe('a valid token of ours', () => {
    it("answers active with the token's claims (a user's token for API A)", async () => {
      const answer = await introspect(userToken);
      const claims = claimsOf(userToken);
      expect(answer).to.deep.include({
        active: true,
        sub: setup.user.id,
        client_id: setup.frontend.id,
        scope: 'read:a',
        aud: setup.apiA.resource.indicator,
        iss: issuer(),
        exp: claims.exp,
        iat: claims.iat,
        jti: claims.jti,
        token_type: 'Bearer',
      });
      expect(answer).to.not.have.property('act');
    });

    it('answers the same on the other instance, with no-store', async () => {
      const response = await introspectRaw(userToken, resourceServer, other);
      expect(response.statusCode).to.equal(200);
      expect(response.body).to.include({ active: true, sub: setup.user.id, jti: claimsOf(userToken).jti });
      expect(String(response.headers['cache-control'])).to.include('no-store');
      expect(String(response.headers['content-type'])).to.match(/^application\/json/);
    });

    it('shows the exchanged token of an impersonation with its act claim', async () => {
      const subject = await service.api.post('subject-tokens', { json: { userId: setup.user.id } });
      expect(subject.statusCode).to.equal(201);
      const issued = expectIssued(
        await exchange(service, setup.backend, {
          subject_token: String(subject.body.subjectToken),
          subject_token_type: impersonationTokenType,
          resource: setup.apiB.resource.indicator,
          scope: 'read:b',
        }),
      );
      const answer = await introspect(issued.access_token);
      expect(answer).to.deep.include({
        active: true,
        sub: setup.user.id,
        client_id: setup.backend.id,
        aud: setup.apiB.resource.indicator,
        scope: 'read:b',
        act: claimsOf(issued.access_token).act,
      });
      expect(answer.act).to.be.an('object').with.property('sub').that.is.a('string');
    });

    it('shows a client credentials token, whose subject is the application', async () => {
      const machine = await createApplication(service, 'MachineToMachine');
      expect(
        (await service.api.post(`applications/${machine.id}/roles`, { json: { roleIds: ['management-api-access'] } }))
          .statusCode,
      ).to.equal(201);
      const response = await service.token(machine.id, machine.secret, {
        grant_type: 'client_credentials',
        resource: service.config.managementApiResource,
        scope: 'all',
      });
      const token = String(response.body.access_token);
      expect(await introspect(token)).to.deep.include({
        active: true,
        sub: machine.id,
        client_id: machine.id,
        aud: service.config.managementApiResource,
        scope: 'all',
      });
    });
  });

  describe('anything else is {active: false}, never an error', () => {
    const now = () => Math.floor(Date.now() / 1000);
    const userClaims = (overrides: Record<string, unknown> = {}) => ({
      iss: issuer(),
      sub: setup.user.id,
      aud: setup.apiA.resource.indicator,
      client_id: setup.frontend.id,
      scope: 'read:a',
      jti: `jti-${Math.random()}`,
      iat: now() - 60,
      exp: now() + 600,
      ...overrides,
    });

    it('a well-signed token of ours that is the same in all but its expiry is active until it expires', async () => {
      expect(await introspect(await signWithServiceKey(service, userClaims()))).to.include({ active: true });
      await expectInactive(await signWithServiceKey(service, userClaims({ iat: now() - 700, exp: now() - 60 })));
    });

    it('a token signed with our key for another issuer', async () => {
      await expectInactive(await signWithServiceKey(service, userClaims({ iss: 'https://elsewhere.test/oidc' })));
    });

    it('a token signed by another key, even claiming our key id', async () => {
      const { privateKey } = await generateKeyPair('ES256');
      const { kid } = JSON.parse(Buffer.from(userToken.split('.')[0], 'base64url').toString()) as { kid: string };
      await expectInactive(
        await new SignJWT(userClaims()).setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid }).sign(privateKey),
      );
    });

    it('an ID token (not typ at+jwt)', async () => {
      const { id_token: idToken } = await userTokens(service, setup.frontend.id, setup.user);
      await expectInactive(idToken);
    });

    it('malformed and unknown strings', async () => {
      const header = Buffer.from(JSON.stringify({ alg: 'ES256', typ: 'at+jwt' })).toString('base64url');
      for (const token of [`${header}.e30.c2ln`, 'abc.def.ghi', 'not-a-token-at-all', 'a'.repeat(2000)]) {
        await expectInactive(token);
      }
    });
  });

  describe('a token whose holder may no longer act is inactive', () => {
    it("a suspended user's token, until the user is reinstated", async () => {
      const username = unique('u');
      const password = 'Sturdy-Tulip-7';
      const user = (await service.api.post('users', { json: { username, password } })).body as { id: string };
      const token = await userAccessToken(
        service,
        setup.frontend.id,
        { username, password },
        setup.apiA.resource.indicator,
      );
      expect(await introspect(token)).to.include({ active: true, sub: user.id });

      const suspend = (isSuspended: boolean) =>
        service.api.patch(`users/${user.id}/is-suspended`, { json: { isSuspended } });
      expect((await suspend(true)).statusCode).to.equal(200);
      await expectInactive(token);
      await expectInactive(token, other);
      expect((await suspend(false)).statusCode).to.equal(200);
      expect(await introspect(token)).to.include({ active: true });

      expect((await service.api.delete(`users/${user.id}`)).statusCode).to.equal(204);
      await expectInactive(token);
    });

    it('a token of a deleted application', async () => {
      const machine = await createApplication(service, 'MachineToMachine');
      await service.api.post(`applications/${machine.id}/roles`, { json: { roleIds: ['management-api-access'] } });
      const response = await service.token(machine.id, machine.secret, {
        grant_type: 'client_credentials',
        resource: service.config.managementApiResource,
        scope: 'all',
      });
      const token = String(response.body.access_token);
      expect(await introspect(token)).to.include({ active: true });
      expect((await service.api.delete(`applications/${machine.id}`)).statusCode).to.equal(204);
      await expectInactive(token);
      await expectInactive(token, other);
    });
  });

  describe('revocation (RFC 7009) takes effect', () => {
    it('a token revoked by its client through openid-client is inactive on both instances and refused for exchange', async () => {
      const token = await userAccessToken(service, setup.frontend.id, setup.user, setup.apiA.resource.indicator);
      expect((await introspectRaw(token, resourceServer, other)).body).to.include({ active: true });

      // The front end is a public client: it revokes with its client_id alone.
      const frontend = await client.discovery(
        new URL(issuer()),
        setup.frontend.id,
        undefined,
        client.None(),
        // eslint-disable-next-line @typescript-eslint/no-deprecated -- plain http on 127.0.0.1
        { execute: [client.allowInsecureRequests] },
      );
      await client.tokenRevocation(frontend, token, { token_type_hint: 'access_token' });

      await expectInactive(token);
      await expectInactive(token, other);
      expectOAuthError(
        await exchange(service, setup.backend, {
          subject_token: token,
          subject_token_type: accessTokenType,
          resource: setup.apiB.resource.indicator,
          scope: 'read:b',
        }),
        400,
        'invalid_request',
        /subject_token was revoked/,
      );
    });

    it('a revocation of an unknown or foreign token answers 200 and changes nothing', async () => {
      const config = await configure(resourceServer);
      await client.tokenRevocation(config, 'not-a-token-at-all');
      // Not the resource server's own token: it is not revoked.
      await client.tokenRevocation(config, userToken);
      expect(await introspect(userToken)).to.include({ active: true });
    });
  });

  describe('who may introspect', () => {
    it('a public client learns only about its own tokens', async () => {
      const asFrontend = (token: string) =>
        service.http.post('oidc/token/introspection', { form: { token, client_id: setup.frontend.id } });
      const own = await asFrontend(userToken);
      expect(own.statusCode).to.equal(200);
      expect(own.body).to.include({ active: true, sub: setup.user.id });

      const machine = await createApplication(service, 'MachineToMachine');
      await service.api.post(`applications/${machine.id}/roles`, { json: { roleIds: ['management-api-access'] } });
      const foreign = String(
        (
          await service.token(machine.id, machine.secret, {
            grant_type: 'client_credentials',
            resource: service.config.managementApiResource,
            scope: 'all',
          })
        ).body.access_token,
      );
      const notOwn = await asFrontend(foreign);
      expect(notOwn.statusCode).to.equal(200);
      expect(notOwn.body).to.deep.equal({ active: false });
    });

    it('a client that fails authentication gets 401 invalid_client and no answer about the token', async () => {
      const response = await introspectRaw(userToken, { id: resourceServer.id, secret: 'not-the-secret' });
      expect(response.statusCode).to.equal(401);
      expect(response.body).to.include({ error: 'invalid_client' });
      expect(response.body).to.not.have.property('active');
    });

    it('no client at all is 400 or 401, never an answer', async () => {
      const response = await service.http.post('oidc/token/introspection', { form: { token: userToken } });
      expect(response.statusCode).to.be.oneOf([400, 401]);
      expect(response.body).to.not.have.property('active');
    });

    it('a missing token is 400 invalid_request', async () => {
      const response = await service.http.post('oidc/token/introspection', {
        form: {},
        headers: {
          authorization: `Basic ${Buffer.from(`${resourceServer.id}:${resourceServer.secret}`).toString('base64')}`,
        },
      });
      expect(response.statusCode).to.equal(400);
      expect(response.body).to.include({ error: 'invalid_request' });
    });
  });

  describe('opaque tokens', () => {
    it('are still answered by the provider', async () => {
      const opaque = await userAccessToken(service, setup.frontend.id, setup.user);
      expect(opaque.split('.')).to.have.length(1);
      expect(await introspect(opaque)).to.include({ active: true, sub: setup.user.id, client_id: setup.frontend.id });
    });
  });
});
