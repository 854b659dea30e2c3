import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { expect } from 'chai';

import { createApiA } from '../../examples/api-a/server.ts';
import { createApiB } from '../../examples/api-b/server.ts';
import { startService, type TestService } from '../support/service.ts';
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
    apiB = createApiB({ issuer, indicator: setup.apiB.resource.indicator, allowedClientIds: [setup.backend.id] });
    apiBUrl = await listen(apiB);
    apiA = createApiA({
      issuer,
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
