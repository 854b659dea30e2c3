import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { expect } from 'chai';

import { createApiA } from '../../examples/api-a/server.ts';
import { createApiB } from '../../examples/api-b/server.ts';
import { freePort, startService, type TestService } from '../support/service.ts';
import { delegationSetup, userAccessToken } from './support.ts';

const listen = (server: Server) =>
  new Promise<string>((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
  );

describe('examples: API A delegates to API B through token exchange', () => {
  let service: TestService;
  let setup: Awaited<ReturnType<typeof delegationSetup>>;
  let apiA: Server;
  let apiB: Server;
  let apiAUrl: string;
  let apiBUrl: string;

  before(async () => {
    service = await startService();
    setup = await delegationSetup(service);
    const issuer = `${service.url}/oidc`;
    // API B's 401s name its metadata by its public address: known before it listens.
    const apiBPort = await freePort();
    apiBUrl = `http://127.0.0.1:${apiBPort}`;
    apiB = createApiB({
      issuer,
      indicator: setup.apiB.resource.indicator,
      allowedClientIds: [setup.backend.id],
      publicUrl: apiBUrl,
    });
    await new Promise<void>((resolve) => apiB.listen(apiBPort, '127.0.0.1', resolve));
    apiA = createApiA({
      issuer,
      apiAIndicator: setup.apiA.resource.indicator,
      clientId: setup.backend.id,
      clientSecret: setup.backend.secret,
      apiBUrl,
      apiBIndicator: setup.apiB.resource.indicator,
    });
    apiAUrl = await listen(apiA);
  });
  after(async () => {
    apiA.close();
    apiB.close();
    await service.stop();
  });

  it('serves the user through API A, and API B sees the user as sub and API A as client_id', async () => {
    const userToken = await userAccessToken(service, setup.frontend.id, setup.user, setup.apiA.resource.indicator);
    const response = await fetch(`${apiAUrl}/my-orders`, { headers: { authorization: `Bearer ${userToken}` } });
    expect(response.status).to.equal(200);
    const body = (await response.json()) as { fromApiB: { user: string; calledBy: string; scopes: string[] } };
    expect(body.fromApiB).to.deep.include({ user: setup.user.id, calledBy: setup.backend.id });
    expect(body.fromApiB.scopes).to.deep.equal(['read:b']);
  });

  it('API A answers a missing, forged or foreign token with 401 (not 502)', async () => {
    const userToken = await userAccessToken(service, setup.frontend.id, setup.user, setup.apiA.resource.indicator);
    const [header, payload] = userToken.split('.');
    const forged = `${header}.${payload}.${'A'.repeat(86)}`;
    // A token for API B is no token for API A.
    const exchanged = await service.token(setup.backend.id, setup.backend.secret, {
      grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
      subject_token: userToken,
      subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
      resource: setup.apiB.resource.indicator,
      scope: 'read:b',
    });
    for (const authorization of [
      undefined,
      'Bearer not-a-token',
      `Bearer ${forged}`,
      `Bearer ${String(exchanged.body.access_token)}`,
    ]) {
      const response = await fetch(`${apiAUrl}/my-orders`, { headers: authorization ? { authorization } : {} });
      expect(response.status, authorization).to.equal(401);
      expect(response.headers.get('www-authenticate')).to.match(/^Bearer error="invalid_token"/);
      expect(((await response.json()) as { error: string }).error).to.equal('invalid_token');
    }
  });

  it('API B describes itself (RFC 9728) and its 401 points there', async () => {
    const metadata = await fetch(`${apiBUrl}/.well-known/oauth-protected-resource`);
    expect(metadata.status).to.equal(200);
    expect(await metadata.json()).to.deep.include({
      resource: setup.apiB.resource.indicator,
      authorization_servers: [`${service.url}/oidc`],
      scopes_supported: ['read:b', 'write:b'],
      bearer_methods_supported: ['header'],
    });
    const refused = await fetch(`${apiBUrl}/orders`);
    expect(refused.status).to.equal(401);
    expect(refused.headers.get('www-authenticate')).to.equal(
      `Bearer error="invalid_token", resource_metadata="${apiBUrl}/.well-known/oauth-protected-resource"`,
    );
  });

  it("API B refuses the user's own token (its audience is API A)", async () => {
    const userToken = await userAccessToken(service, setup.frontend.id, setup.user, setup.apiA.resource.indicator);
    const response = await fetch(`${apiBUrl}/orders`, { headers: { authorization: `Bearer ${userToken}` } });
    expect(response.status).to.equal(401);
  });

  it('API B refuses a route whose scope the exchanged token lacks, and an upstream it does not trust', async () => {
    const userToken = await userAccessToken(service, setup.frontend.id, setup.user, setup.apiA.resource.indicator);
    const exchanged = await service.token(setup.backend.id, setup.backend.secret, {
      grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
      subject_token: userToken,
      subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
      resource: setup.apiB.resource.indicator,
      scope: 'read:b',
    });
    const post = await fetch(`${apiBUrl}/orders`, {
      method: 'POST',
      headers: { authorization: `Bearer ${String(exchanged.body.access_token)}` },
    });
    expect(post.status).to.equal(403);

    const other = (
      await service.api.post('applications', {
        json: { name: 'untrusted', type: 'MachineToMachine', customClientMetadata: { allowTokenExchange: true } },
      })
    ).body;
    const fromOther = await service.token(other.id, other.secret, {
      grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
      subject_token: userToken,
      subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
      resource: setup.apiB.resource.indicator,
      scope: 'read:b',
    });
    const refused = await fetch(`${apiBUrl}/orders`, {
      headers: { authorization: `Bearer ${String(fromOther.body.access_token)}` },
    });
    expect(refused.status).to.equal(403);
  });
});
