import { expect } from 'chai';

import { createApplication, createResource } from '../support/fixtures.ts';
import { startService, type TestService } from '../support/service.ts';
import { unique } from '../support/values.ts';
import {
  accessTokenType,
  claimsOf,
  delegationSetup,
  exchange,
  expectIssued,
  expectOAuthError,
  signWithServiceKey,
  tokenExchange,
  userAccessToken,
} from './support.ts';

const jwtTokenType = 'urn:ietf:params:oauth:token-type:jwt';

/**
 * Lifetimes never grow (an exchanged token ends no later than its subject and actor tokens, and no
 * refresh token is issued), and the target named by `audience` (RFC 8693 §2.1) as well as `resource`.
 */
describe('token exchange: lifetimes, audience and requested_token_type', () => {
  let service: TestService;
  let setup: Awaited<ReturnType<typeof delegationSetup>>;
  let subjectToken: string;

  before(async () => {
    service = await startService();
    setup = await delegationSetup(service);
    subjectToken = await userAccessToken(service, setup.frontend.id, setup.user, setup.apiA.resource.indicator);
  });
  after(() => service.stop());

  const apiB = () => setup.apiB.resource.indicator;

  /** A user's access token of ours that ends in `seconds`. */
  async function shortToken(seconds: number, claims: Record<string, unknown> = {}) {
    const now = Math.floor(Date.now() / 1000);
    return signWithServiceKey(service, {
      iss: `${service.url}/oidc`,
      sub: setup.user.id,
      client_id: setup.frontend.id,
      aud: setup.apiA.resource.indicator,
      jti: unique('jti'),
      iat: now,
      exp: now + seconds,
      scope: '',
      ...claims,
    });
  }

  describe('lifetimes never grow', () => {
    it("caps exp and expires_in at the subject token's end", async () => {
      const subject = await shortToken(120);
      const subjectExp = claimsOf(subject).exp!;
      // Many at once, so that some are issued in a later second than they began in.
      const responses = await Promise.all(
        Array.from({ length: 40 }, async () =>
          expectIssued(
            await exchange(service, setup.backend, {
              subject_token: subject,
              subject_token_type: accessTokenType,
              resource: apiB(),
              scope: 'read:b',
            }),
          ),
        ),
      );
      for (const response of responses) {
        const issued = claimsOf(response.access_token);
        expect(issued.exp).to.be.at.most(subjectExp);
        expect(response.expires_in).to.be.at.most(120).and.above(0);
        expect(issued.exp! - issued.iat!).to.equal(response.expires_in);
      }
    });

    it("caps them at the actor token's end too", async () => {
      const machine = await createApplication(service, 'MachineToMachine');
      const now = Math.floor(Date.now() / 1000);
      const actor = await signWithServiceKey(service, {
        iss: `${service.url}/oidc`,
        sub: machine.id,
        client_id: machine.id,
        aud: setup.apiA.resource.indicator,
        jti: unique('jti'),
        iat: now,
        exp: now + 60,
        scope: '',
      });
      const response = expectIssued(
        await exchange(service, setup.backend, {
          subject_token: subjectToken,
          subject_token_type: accessTokenType,
          actor_token: actor,
          actor_token_type: accessTokenType,
          resource: apiB(),
        }),
      );
      expect(claimsOf(response.access_token).exp).to.be.at.most(claimsOf(actor).exp!);
      expect(response.expires_in).to.be.at.most(60);
    });

    it("keeps the resource's lifetime when the subject token outlives it", async () => {
      const response = expectIssued(
        await exchange(service, setup.backend, {
          subject_token: await shortToken(3000),
          subject_token_type: accessTokenType,
          resource: apiB(),
        }),
      );
      expect(response.expires_in).to.equal(900);
    });

    it('never issues a refresh token, even when offline_access is asked for', async () => {
      const response = await exchange(service, setup.backend, {
        subject_token: subjectToken,
        subject_token_type: accessTokenType,
        resource: apiB(),
        scope: 'read:b offline_access',
      });
      const body = expectIssued(response);
      expect(body).not.to.have.property('refresh_token');
      expect(body.scope).to.equal('read:b');
    });
  });

  describe('audience (repeatable) names the API resource by indicator or name', () => {
    let named: { id: string; indicator: string; name: string };

    before(async () => {
      const name = unique('orders-api');
      const indicator = `https://${name}.example.com`;
      named = (await service.api.post('resources', { json: { name, indicator } })).body;
      const scope = (await service.api.post(`resources/${named.id}/scopes`, { json: { name: 'read:orders' } })).body;
      await service.api.post(`roles/${setup.role.id}/scopes`, { json: { scopeIds: [scope.id] } });
    });

    const byAudience = (audiences: string[], extra: Record<string, string> = {}) => {
      const form = new URLSearchParams({
        grant_type: tokenExchange,
        subject_token: subjectToken,
        subject_token_type: accessTokenType,
        scope: 'read:orders',
        ...extra,
      });
      for (const audience of audiences) {
        form.append('audience', audience);
      }
      return service.http.post('oidc/token', {
        body: form.toString(),
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from(`${setup.backend.id}:${setup.backend.secret}`).toString('base64')}`,
        },
      });
    };

    it("audience = the resource's name: aud is its indicator", async () => {
      const body = expectIssued(await byAudience([named.name]));
      expect(claimsOf(body.access_token).aud).to.equal(named.indicator);
      expect(body.scope).to.equal('read:orders');
    });

    it('audience = the indicator, repeated with the name, and with resource naming the same API', async () => {
      expect(claimsOf(expectIssued(await byAudience([named.indicator])).access_token).aud).to.equal(named.indicator);
      expect(claimsOf(expectIssued(await byAudience([named.indicator, named.name])).access_token).aud).to.equal(
        named.indicator,
      );
      const both = expectIssued(await byAudience([named.name], { resource: named.indicator }));
      expect(claimsOf(both.access_token).aud).to.equal(named.indicator);
    });

    it('an unknown audience is invalid_target, naming it', async () => {
      expectOAuthError(await byAudience(['no-such-api']), 400, 'invalid_target', /audience no-such-api/);
    });

    it('audience and resource naming different APIs, or two audiences naming two, are invalid_target', async () => {
      expectOAuthError(
        await byAudience([named.name], { resource: apiB() }),
        400,
        'invalid_target',
        'resource and audience must name the same single API resource',
      );
      expectOAuthError(
        await byAudience([named.name, apiB()]),
        400,
        'invalid_target',
        'resource and audience must name the same single API resource',
      );
    });

    it('a name shared by two resources is invalid_target (use the indicator)', async () => {
      const shared = unique('shared');
      await createResourceNamed(shared);
      await createResourceNamed(shared);
      expectOAuthError(await byAudience([shared]), 400, 'invalid_target', /several API resources/);
    });

    async function createResourceNamed(name: string) {
      const created = await service.api.post('resources', {
        json: { name, indicator: `https://${unique('r')}.example.com` },
      });
      expect(created.statusCode, JSON.stringify(created.body)).to.be.oneOf([200, 201]);
    }

    it('the management API stays closed when named by audience', async () => {
      expectOAuthError(
        await byAudience([service.config.managementApiResource]),
        400,
        'invalid_target',
        /management API/,
      );
    });
  });

  describe('requested_token_type', () => {
    const form = (requested: string) => ({
      subject_token: subjectToken,
      subject_token_type: accessTokenType,
      resource: apiB(),
      scope: 'read:b',
      requested_token_type: requested,
    });

    it('access_token is issued as access_token; jwt as jwt (the same JWT access token)', async () => {
      const asAccessToken = expectIssued(await exchange(service, setup.backend, form(accessTokenType)));
      expect(asAccessToken.issued_token_type).to.equal(accessTokenType);
      const asJwt = expectIssued(await exchange(service, setup.backend, form(jwtTokenType)));
      expect(asJwt.issued_token_type).to.equal(jwtTokenType);
      expect(claimsOf(asJwt.access_token).aud).to.equal(apiB());
    });

    it('anything else is invalid_request', async () => {
      for (const requested of [
        'urn:ietf:params:oauth:token-type:id_token',
        'urn:ietf:params:oauth:token-type:refresh_token',
        'urn:ietf:params:oauth:token-type:saml2',
      ]) {
        expectOAuthError(
          await exchange(service, setup.backend, form(requested)),
          400,
          'invalid_request',
          /unsupported requested_token_type/,
        );
      }
    });
  });

  it('discovery advertises the grant and DPoP', async () => {
    const { body } = await service.http.get('oidc/.well-known/openid-configuration');
    expect(body.grant_types_supported).to.include(tokenExchange);
    expect(body.dpop_signing_alg_values_supported).to.include('ES256');
  });

  it('a resource made by the fixtures is reachable by audience too (its name is its indicator)', async () => {
    const { resource } = await createResource(service, []);
    const body = expectIssued(
      await exchange(service, setup.backend, {
        subject_token: subjectToken,
        subject_token_type: accessTokenType,
        audience: resource.indicator,
      }),
    );
    expect(claimsOf(body.access_token).aud).to.equal(resource.indicator);
  });
});
