import { createHash, randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { calculateJwkThumbprint, type CryptoKey, exportJWK, generateKeyPair, SignJWT } from 'jose';

import { callApiAForUser } from '../../examples/agent/agent.ts';
import { type ApiAOptions, createApiA } from '../../examples/api-a/server.ts';
import { createApiB } from '../../examples/api-b/server.ts';
import { createApplication } from '../support/fixtures.ts';
import { freePort } from '../support/service.ts';
import { type Federation, federationSetup, stopFederation } from './outside-issuer-support.ts';
import { accessTokenType, claimsOf, exchange, signWithServiceKey, tokenExchange, userAccessToken } from './support.ts';

const listen = (server: Server) =>
  new Promise<string>((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
  );

type Key = { privateKey: CryptoKey; publicKey: CryptoKey };

/** An RFC 9449 proof made with jose, as any DPoP client makes one; `claims` override the right ones. */
async function proof(key: Key, htm: string, htu: string, accessToken?: string, claims: Record<string, unknown> = {}) {
  const ath = accessToken && createHash('sha256').update(accessToken).digest('base64url');
  return new SignJWT({ htm, htu, jti: randomUUID(), iat: Math.floor(Date.now() / 1000), ath, ...claims })
    .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: await exportJWK(key.publicKey) })
    .sign(key.privateKey);
}

/**
 * The runnable examples against the real service over real HTTP: API A (the plain exchange, an agent
 * as actor, users of an outside issuer, DPoP-bound calls), API B (its checks, DPoP proofs included)
 * and the agent. A second instance of the service is the outside issuer.
 */
describe('examples: API A delegates to API B through token exchange', () => {
  let fed: Federation;
  const servers: Server[] = [];
  let apiAUrl: string;
  let apiADpopUrl: string;
  let apiBUrl: string;

  const service = () => fed.ours;
  const setup = () => fed.setup;
  const apiA = () => fed.setup.apiA.resource.indicator;
  const apiB = () => fed.setup.apiB.resource.indicator;
  const userToken = () => userAccessToken(service(), setup().frontend.id, setup().user, apiA());
  const getMyOrders = (url: string, headers: Record<string, string>) => fetch(`${url}/my-orders`, { headers });
  const bodyOf = async (response: Response) =>
    (await response.json()) as { error?: string; error_description?: string; fromApiB?: Record<string, unknown> };

  before(async function () {
    // Two instances of the service: the set-ups of outside-issuers.test.ts get as long.
    this.timeout(120_000);
    fed = await federationSetup();
    const issuer = `${service().url}/oidc`;
    // API B's 401s name its metadata by its public address: known before it listens.
    const apiBPort = await freePort();
    apiBUrl = `http://127.0.0.1:${apiBPort}`;
    const b = createApiB({ issuer, indicator: apiB(), allowedClientIds: [setup().backend.id], publicUrl: apiBUrl });
    servers.push(b);
    await new Promise<void>((resolve) => b.listen(apiBPort, '127.0.0.1', resolve));
    const options: ApiAOptions = {
      issuer,
      apiAIndicator: apiA(),
      clientId: setup().backend.id,
      clientSecret: setup().backend.secret,
      apiBUrl,
      apiBIndicator: apiB(),
    };
    const a = createApiA({
      ...options,
      outsideIssuers: [`${fed.outside.url}/oidc`],
      outsideAudience: fed.far.apiA.resource.indicator,
    });
    const aDpop = createApiA({ ...options, dpop: true });
    servers.push(a, aDpop);
    apiAUrl = await listen(a);
    apiADpopUrl = await listen(aDpop);
  });
  after(async () => {
    for (const server of servers) {
      server.close();
    }
    await stopFederation(fed);
  });

  describe('the plain exchange', () => {
    it('serves the user through API A, and API B sees the user as sub and API A as client_id', async () => {
      const response = await getMyOrders(apiAUrl, { authorization: `Bearer ${await userToken()}` });
      expect(response.status).to.equal(200);
      const { fromApiB } = await bodyOf(response);
      expect(fromApiB).to.deep.include({ user: setup().user.id, calledBy: setup().backend.id, scopes: ['read:b'] });
      expect(fromApiB).not.to.have.any.keys('act', 'cnf');
    });

    it('API A answers a missing, forged or foreign token with 401 (not 502)', async () => {
      const token = await userToken();
      const [header, payload] = token.split('.');
      const forged = `${header}.${payload}.${'A'.repeat(86)}`;
      // A token for API B is no token for API A.
      const exchanged = await exchange(service(), setup().backend, {
        subject_token: token,
        subject_token_type: accessTokenType,
        resource: apiB(),
        scope: 'read:b',
      });
      for (const authorization of [
        undefined,
        'Bearer not-a-token',
        `Bearer ${forged}`,
        `Bearer ${String(exchanged.body.access_token)}`,
      ]) {
        const response = await getMyOrders(apiAUrl, authorization ? { authorization } : {});
        expect(response.status, authorization).to.equal(401);
        expect(response.headers.get('www-authenticate')).to.match(/^Bearer error="invalid_token"/);
        expect((await bodyOf(response)).error).to.equal('invalid_token');
      }
    });

    it('API B describes itself (RFC 9728), DPoP included, and its 401 points there', async () => {
      const metadata = await fetch(`${apiBUrl}/.well-known/oauth-protected-resource`);
      expect(metadata.status).to.equal(200);
      expect(await metadata.json()).to.deep.include({
        resource: apiB(),
        authorization_servers: [`${service().url}/oidc`],
        scopes_supported: ['read:b', 'write:b'],
        bearer_methods_supported: ['header'],
        dpop_signing_alg_values_supported: ['ES256', 'Ed25519', 'EdDSA'],
        dpop_bound_access_tokens_required: false,
      });
      const refused = await fetch(`${apiBUrl}/orders`);
      expect(refused.status).to.equal(401);
      expect(refused.headers.get('www-authenticate')).to.equal(
        `Bearer error="invalid_token", resource_metadata="${apiBUrl}/.well-known/oauth-protected-resource"`,
      );
    });

    it("API B refuses the user's own token (its audience is API A)", async () => {
      const response = await fetch(`${apiBUrl}/orders`, { headers: { authorization: `Bearer ${await userToken()}` } });
      expect(response.status).to.equal(401);
    });

    it('API B refuses a route whose scope the exchanged token lacks, and an upstream it does not trust', async () => {
      const token = await userToken();
      const form = { subject_token: token, subject_token_type: accessTokenType, resource: apiB(), scope: 'read:b' };
      const exchanged = await exchange(service(), setup().backend, form);
      const post = await fetch(`${apiBUrl}/orders`, {
        method: 'POST',
        headers: { authorization: `Bearer ${String(exchanged.body.access_token)}` },
      });
      expect(post.status).to.equal(403);

      const other = await createApplication(service(), 'MachineToMachine', {
        customClientMetadata: { allowTokenExchange: true },
      });
      const fromOther = await exchange(service(), other, form);
      const refused = await fetch(`${apiBUrl}/orders`, {
        headers: { authorization: `Bearer ${String(fromOther.body.access_token)}` },
      });
      expect(refused.status).to.equal(403);
    });
  });

  describe('an agent as actor (delegation)', () => {
    const agentOptions = (agent: { id: string; secret: string }) => ({
      issuer: `${service().url}/oidc`,
      clientId: agent.id,
      clientSecret: agent.secret,
      apiAUrl,
      apiAIndicator: apiA(),
    });

    it('the agent calls API A with the user’s token and its own: API B sees the user, API A and the agent (act)', async () => {
      const agent = await createApplication(service(), 'MachineToMachine');
      const { status, body } = await callApiAForUser(agentOptions(agent), await userToken());
      expect(status, JSON.stringify(body)).to.equal(200);
      expect((body as { fromApiB: unknown }).fromApiB).to.deep.include({
        user: setup().user.id,
        calledBy: setup().backend.id,
        act: { sub: agent.id, client_id: agent.id },
        scopes: ['read:b'],
      });
    });

    it('API A answers a bad actor token with 401 invalid_token: its own check, or the service’s', async () => {
      const agent = await createApplication(service(), 'MachineToMachine');
      const tokenFor = async (resource: string) =>
        String(
          (await service().token(agent.id, agent.secret, { grant_type: 'client_credentials', resource })).body
            .access_token,
        );
      const forApiA = await tokenFor(apiA());
      // The agent's token for another API is no token for API A.
      const forApiB = await tokenFor(apiB());
      const authorization = `Bearer ${await userToken()}`;
      const refusals = async (actorToken: string) => {
        const response = await getMyOrders(apiAUrl, { authorization, 'actor-token': actorToken });
        expect(response.status).to.equal(401);
        expect(response.headers.get('www-authenticate')).to.match(/^Bearer error="invalid_token"/);
        const body = await bodyOf(response);
        expect(body.error).to.equal('invalid_token');
        return body.error_description;
      };
      expect(await refusals('not-a-token')).to.match(/^actor-token: /);
      expect(await refusals(forApiB)).to.match(/^actor-token: .*aud/);
      // A well-signed token of an agent deleted since: only the service knows.
      expect((await service().api.delete(`applications/${agent.id}`)).statusCode).to.equal(204);
      expect(await refusals(forApiA)).to.equal('actor_token was issued to an application that no longer exists');
    });

    it('an agent the user’s front end does not allow (its delegation policy) gets 403 with the service’s reason, not 502', async () => {
      const [allowed, stranger] = [
        await createApplication(service(), 'MachineToMachine'),
        await createApplication(service(), 'MachineToMachine'),
      ];
      const frontend = await createApplication(service(), 'SPA', {
        oidcClientMetadata: { redirectUris: ['http://frontend.test/callback'], postLogoutRedirectUris: [] },
        customClientMetadata: { delegation: { allowedActorClientIds: [allowed.id] } },
      });
      const token = await userAccessToken(service(), frontend.id, setup().user, apiA());

      const refused = await callApiAForUser(agentOptions(stranger), token);
      expect(refused.status).to.equal(403);
      expect(refused.body).to.deep.include({ error: 'forbidden' });
      expect((refused.body as { error_description: string }).error_description).to.include(stranger.id);

      const served = await callApiAForUser(agentOptions(allowed), token);
      expect(served.status).to.equal(200);
    });
  });

  describe('a user of a trusted outside issuer', () => {
    it("API A takes the partner's token and exchanges it as a jwt; the user is served once given a role, an agent may act for it", async () => {
      const authorization = `Bearer ${fed.outsideToken}`;
      // A new user here (made on the first exchange) holds no role on API B yet.
      const first = await getMyOrders(apiAUrl, { authorization });
      expect(first.status).to.equal(403);
      expect((await bodyOf(first)).fromApiB).to.deep.include({ error: 'insufficient_scope' });

      const jwtType = 'urn:ietf:params:oauth:token-type:jwt';
      const exchanged = await exchange(service(), setup().backend, {
        subject_token: fed.outsideToken,
        subject_token_type: jwtType,
        resource: apiB(),
      });
      const user = String(claimsOf(String(exchanged.body.access_token)).sub);
      await service().api.post(`users/${user}/roles`, { json: { roleIds: [setup().role.id] } });

      const served = await getMyOrders(apiAUrl, { authorization });
      expect(served.status).to.equal(200);
      expect((await bodyOf(served)).fromApiB).to.deep.include({
        user,
        calledBy: setup().backend.id,
        scopes: ['read:b'],
      });

      // An agent may act for the partner's user too.
      const agent = await createApplication(service(), 'MachineToMachine');
      const delegated = await callApiAForUser(
        {
          issuer: `${service().url}/oidc`,
          clientId: agent.id,
          clientSecret: agent.secret,
          apiAUrl,
          apiAIndicator: apiA(),
        },
        fed.outsideToken,
      );
      expect(delegated.status, JSON.stringify(delegated.body)).to.equal(200);
      expect((delegated.body as { fromApiB: unknown }).fromApiB).to.deep.include({
        user,
        act: { sub: agent.id, client_id: agent.id },
      });
    });

    it('refuses with 401 a token of an issuer API A is not configured with, or one not signed by its issuer', async () => {
      const now = Math.floor(Date.now() / 1000);
      const claims = { aud: fed.far.apiA.resource.indicator, sub: 'someone', iat: now, exp: now + 300 };
      const cases: Array<[string, string, RegExp]> = [
        // The DPoP-bound API A is not configured with the partner.
        [apiADpopUrl, fed.outsideToken, /tokens of issuer .* are not accepted here/],
        [
          apiAUrl,
          await signWithServiceKey(service(), { ...claims, iss: 'https://unknown.example.com' }),
          /tokens of issuer https:\/\/unknown\.example\.com are not accepted here/,
        ],
        // The partner's name, our key: not in the partner's key set.
        [
          apiAUrl,
          await signWithServiceKey(service(), { ...claims, iss: `${fed.outside.url}/oidc` }),
          /no applicable key/i,
        ],
      ];
      for (const [url, token, reason] of cases) {
        const response = await getMyOrders(url, { authorization: `Bearer ${token}` });
        expect(response.status).to.equal(401);
        const body = await bodyOf(response);
        expect(body.error).to.equal('invalid_token');
        expect(body.error_description).to.match(reason);
      }
    });
  });

  describe('DPoP (RFC 9449)', () => {
    let key: Key;
    let bound: string;
    const ordersUrl = () => `${apiBUrl}/orders`;
    const getOrders = (scheme: string, token: string, dpop?: string) =>
      fetch(ordersUrl(), { headers: { authorization: `${scheme} ${token}`, ...(dpop && { dpop }) } });

    /** A 401 of API B with the DPoP challenge and this error. */
    async function expectDpopRefusal(response: Response, error: string, reason: RegExp) {
      const body = await bodyOf(response);
      expect(response.status, JSON.stringify(body)).to.equal(401);
      expect(response.headers.get('www-authenticate')).to.match(new RegExp(`^DPoP error="${error}", algs="`));
      expect(body.error).to.equal(error);
      expect(body.error_description).to.match(reason);
    }

    before(async () => {
      key = await generateKeyPair('ES256');
      const basic = Buffer.from(`${setup().backend.id}:${setup().backend.secret}`).toString('base64');
      const response = await service().http.post('oidc/token', {
        form: {
          grant_type: tokenExchange,
          subject_token: await userToken(),
          subject_token_type: accessTokenType,
          resource: apiB(),
          scope: 'read:b',
        },
        headers: { authorization: `Basic ${basic}`, dpop: await proof(key, 'POST', `${service().url}/oidc/token`) },
      });
      expect(response.statusCode, JSON.stringify(response.body)).to.equal(200);
      bound = String(response.body.access_token);
    });

    it('API A with DPoP on gets a token bound to its own key and is served through API B', async () => {
      const response = await getMyOrders(apiADpopUrl, { authorization: `Bearer ${await userToken()}` });
      expect(response.status).to.equal(200);
      const { fromApiB } = await bodyOf(response);
      expect(fromApiB).to.deep.include({ user: setup().user.id, calledBy: setup().backend.id, scopes: ['read:b'] });
      expect(fromApiB?.cnf).to.have.property('jkt').that.is.a('string');
    });

    it('API B takes a bound token with a proof of its key, once per proof', async () => {
      const good = await proof(key, 'GET', ordersUrl(), bound);
      const served = await getOrders('DPoP', bound, good);
      expect(served.status).to.equal(200);
      const jkt = await calculateJwkThumbprint(await exportJWK(key.publicKey));
      expect(await served.json()).to.deep.include({ user: setup().user.id, cnf: { jkt } });
      await expectDpopRefusal(await getOrders('DPoP', bound, good), 'invalid_dpop_proof', /used before/);
    });

    it('API B refuses a bound token sent as Bearer, and an unbound one sent as DPoP', async () => {
      await expectDpopRefusal(await getOrders('Bearer', bound), 'invalid_token', /^the token is DPoP-bound/);
      const unbound = await exchange(service(), setup().backend, {
        subject_token: await userToken(),
        subject_token_type: accessTokenType,
        resource: apiB(),
        scope: 'read:b',
      });
      const token = String(unbound.body.access_token);
      await expectDpopRefusal(
        await getOrders('DPoP', token, await proof(key, 'GET', ordersUrl(), token)),
        'invalid_token',
        /^the token is not DPoP-bound/,
      );
    });

    it('API B refuses a proof of another key than the token’s', async () => {
      const other = await generateKeyPair('ES256');
      await expectDpopRefusal(
        await getOrders('DPoP', bound, await proof(other, 'GET', ordersUrl(), bound)),
        'invalid_token',
        /not the one the token is bound to/,
      );
    });

    it('API B refuses a missing proof, and proofs with the wrong htu, htm, ath or an old iat', async () => {
      const old = Math.floor(Date.now() / 1000) - 600;
      const cases: Array<[string | undefined, RegExp]> = [
        [undefined, /DPoP proof header is required/],
        [await proof(key, 'GET', `${apiBUrl}/elsewhere`, bound), /htu/],
        [await proof(key, 'GET', 'https://api-b.example.com/orders', bound), /htu/],
        [await proof(key, 'POST', ordersUrl(), bound), /htm/],
        [await proof(key, 'GET', ordersUrl(), `${bound}x`), /ath/],
        [await proof(key, 'GET', ordersUrl()), /ath/],
        [await proof(key, 'GET', ordersUrl(), bound, { iat: old }), /"iat" claim timestamp check failed/],
      ];
      for (const [dpop, reason] of cases) {
        await expectDpopRefusal(await getOrders('DPoP', bound, dpop), 'invalid_dpop_proof', reason);
      }
    });
  });
});
