import { expect } from 'chai';
import { calculateJwkThumbprint, exportJWK } from 'jose';
import * as client from 'openid-client';

import { createApplication } from '../support/fixtures.ts';
import { adminClient, startService, type TestService } from '../support/service.ts';
import {
  accessTokenType,
  claimsOf,
  delegationSetup,
  type DpopKey,
  dpopKey,
  dpopProof,
  expectIssued,
  expectOAuthError,
  tokenExchange,
  userAccessToken,
  userTokens,
} from './support.ts';

/**
 * DPoP (RFC 9449) through token exchange: a `DPoP` header on the exchange binds the issued token to
 * its key (`cnf.jkt`, `token_type: DPoP`); a bound subject token is exchanged only with a proof of
 * its own key. Bearer stays the default.
 */
describe('token exchange: DPoP-bound tokens (RFC 9449)', () => {
  let service: TestService;
  let setup: Awaited<ReturnType<typeof delegationSetup>>;
  let subjectToken: string;
  let apiAKey: DpopKey;

  before(async () => {
    service = await startService();
    setup = await delegationSetup(service);
    subjectToken = await userAccessToken(service, setup.frontend.id, setup.user, setup.apiA.resource.indicator);
    apiAKey = await dpopKey();
  });
  after(() => service.stop());

  const tokenEndpoint = () => `${service.url}/oidc/token`;
  const basic = (application: { id: string; secret: string }) =>
    `Basic ${Buffer.from(`${application.id}:${application.secret}`).toString('base64')}`;

  const exchangeWith = (form: Record<string, string>, dpop?: string) =>
    service.http.post('oidc/token', {
      form: {
        grant_type: tokenExchange,
        subject_token_type: accessTokenType,
        resource: setup.apiB.resource.indicator,
        scope: 'read:b',
        ...form,
      },
      headers: { authorization: basic(setup.backend), ...(dpop && { dpop }) },
    });

  it('Bearer stays the default: no DPoP header, no cnf', async () => {
    const body = expectIssued(await exchangeWith({ subject_token: subjectToken }));
    expect(body.token_type).to.equal('Bearer');
    expect(claimsOf(body.access_token)).not.to.have.property('cnf');
  });

  it("a DPoP header binds the issued token to the proof's key: cnf.jkt, token_type DPoP; introspection says so", async () => {
    const body = expectIssued(
      await exchangeWith({ subject_token: subjectToken }, await dpopProof(apiAKey, tokenEndpoint())),
    );
    expect(body.token_type).to.equal('DPoP');
    expect(claimsOf(body.access_token).cnf).to.deep.equal({ jkt: apiAKey.jkt });

    const introspector = await createApplication(service, 'MachineToMachine');
    const introspection = await service.http.post('oidc/token/introspection', {
      form: { token: body.access_token },
      headers: { authorization: basic(introspector) },
    });
    expect(introspection.body).to.include({ active: true, token_type: 'DPoP' });
    expect(introspection.body.cnf).to.deep.equal({ jkt: apiAKey.jkt });
  });

  it('openid-client (getDPoPHandle) gets a bound token from the exchange', async () => {
    const config = await client.discovery(
      new URL(`${service.url}/oidc`),
      setup.backend.id,
      setup.backend.secret,
      undefined,
      // eslint-disable-next-line @typescript-eslint/no-deprecated -- deprecated only to stand out: the test service is plain http on 127.0.0.1
      { execute: [client.allowInsecureRequests] },
    );
    const keyPair = await client.randomDPoPKeyPair('ES256');
    const response = await client.genericGrantRequest(
      config,
      tokenExchange,
      {
        subject_token: subjectToken,
        subject_token_type: accessTokenType,
        resource: setup.apiB.resource.indicator,
        scope: 'read:b',
      },
      { DPoP: client.getDPoPHandle(config, keyPair) },
    );
    expect(response.token_type).to.equal('dpop');
    const jkt = await calculateJwkThumbprint(await exportJWK(keyPair.publicKey));
    expect(claimsOf(response.access_token).cnf).to.deep.equal({ jkt });
  });

  describe('a DPoP-bound subject token', () => {
    let bound: string;

    before(async () => {
      bound = expectIssued(
        await exchangeWith({ subject_token: subjectToken }, await dpopProof(apiAKey, tokenEndpoint())),
      ).access_token;
    });

    it('is exchanged with a proof of the same key (the new token bound to it too)', async () => {
      const body = expectIssued(
        await exchangeWith({ subject_token: bound }, await dpopProof(apiAKey, tokenEndpoint())),
      );
      expect(claimsOf(body.access_token).cnf).to.deep.equal({ jkt: apiAKey.jkt });
    });

    it('is refused without a proof', async () => {
      expectOAuthError(await exchangeWith({ subject_token: bound }), 400, 'invalid_request', /DPoP-bound/);
    });

    it('an opaque one (a DPoP-bound sign-in without a resource) is held to its key too', async () => {
      const signedIn = await userTokens(service, setup.frontend.id, setup.user, undefined, {
        dpop: await dpopProof(apiAKey, tokenEndpoint()),
      });
      expect(signedIn.access_token.split('.')).to.have.length(1);
      expectOAuthError(
        await exchangeWith({ subject_token: signedIn.access_token }),
        400,
        'invalid_request',
        /DPoP-bound/,
      );
      const body = expectIssued(
        await exchangeWith({ subject_token: signedIn.access_token }, await dpopProof(apiAKey, tokenEndpoint())),
      );
      expect(claimsOf(body.access_token).cnf).to.deep.equal({ jkt: apiAKey.jkt });
    });

    it("is refused with another key's proof", async () => {
      const other = await dpopKey();
      expectOAuthError(
        await exchangeWith({ subject_token: bound }, await dpopProof(other, tokenEndpoint())),
        400,
        'invalid_request',
        /another key/,
      );
    });
  });

  describe('proofs are checked (RFC 9449 §4.3)', () => {
    it('refuses a replayed proof', async () => {
      const once = await dpopProof(apiAKey, tokenEndpoint());
      expectIssued(await exchangeWith({ subject_token: subjectToken }, once));
      expectOAuthError(await exchangeWith({ subject_token: subjectToken }, once), 400, 'invalid_dpop_proof', /Replay/);
    });

    it('refuses a proof for another URL, another method, an old one, and a malformed one', async () => {
      const cases: Array<[string, RegExp]> = [
        [await dpopProof(apiAKey, `${service.url}/oidc/elsewhere`), /htu/],
        [await dpopProof(apiAKey, tokenEndpoint(), { htm: 'GET' }), /htm/],
        [await dpopProof(apiAKey, tokenEndpoint(), { iat: Math.floor(Date.now() / 1000) - 3600 }), /iat/],
        ['not.a.proof', /DPoP/],
      ];
      for (const [bad, description] of cases) {
        expectOAuthError(
          await exchangeWith({ subject_token: subjectToken }, bad),
          400,
          'invalid_dpop_proof',
          description,
        );
      }
    });
  });

  describe('client credentials and our own verifier', () => {
    it('client credentials: Bearer by default, DPoP-bound with a proof', async () => {
      const form = { grant_type: 'client_credentials', resource: service.config.managementApiResource, scope: 'all' };
      const plain = await service.http.post('oidc/token', { form, headers: { authorization: basic(adminClient) } });
      expect(plain.body.token_type).to.equal('Bearer');
      const bound = await service.http.post('oidc/token', {
        form,
        headers: { authorization: basic(adminClient), dpop: await dpopProof(apiAKey, tokenEndpoint()) },
      });
      expect(bound.statusCode, JSON.stringify(bound.body)).to.equal(200);
      expect(bound.body.token_type).to.equal('DPoP');
      expect(claimsOf(String(bound.body.access_token)).cnf).to.deep.equal({ jkt: apiAKey.jkt });
    });

    it('the Account API refuses a DPoP-bound opaque token sent as Bearer (RFC 9449 §7.2)', async () => {
      const signedIn = await userTokens(service, setup.frontend.id, setup.user, undefined, {
        dpop: await dpopProof(apiAKey, tokenEndpoint()),
      });
      expect(signedIn.token_type).to.equal('DPoP');
      const refused = await service.http.get('api/my-account', {
        headers: { authorization: `Bearer ${signedIn.access_token}` },
      });
      expect(refused.statusCode).to.equal(401);
      expect(refused.body.message).to.match(/DPoP-bound/);
      const bearer = await userAccessToken(service, setup.frontend.id, setup.user);
      const accepted = await service.http.get('api/my-account', { headers: { authorization: `Bearer ${bearer}` } });
      expect(accepted.statusCode).to.equal(200);
    });

    it('the management API refuses a DPoP-bound token (it takes Bearer tokens only) and accepts a Bearer one', async () => {
      const form = { grant_type: 'client_credentials', resource: service.config.managementApiResource, scope: 'all' };
      const bound = await service.http.post('oidc/token', {
        form,
        headers: { authorization: basic(adminClient), dpop: await dpopProof(apiAKey, tokenEndpoint()) },
      });
      const refused = await service.http.get('api/applications', {
        headers: { authorization: `Bearer ${String(bound.body.access_token)}` },
      });
      expect(refused.statusCode).to.equal(401);
      expect(refused.body.code).to.equal('auth.unauthorized');
      expect(refused.body.message).to.match(/DPoP-bound/);
      expect((await service.api.get('applications')).statusCode).to.equal(200);
    });
  });
});
