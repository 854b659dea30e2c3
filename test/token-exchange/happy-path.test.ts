import { expect } from 'chai';
import { createRemoteJWKSet, decodeProtectedHeader, type JWTPayload, jwtVerify } from 'jose';
import * as client from 'openid-client';

import { createApplication, defaultSecretOf } from '../support/fixtures.ts';
import { startService, type TestService } from '../support/service.ts';
import {
  accessTokenType,
  claimsOf,
  delegationSetup,
  exchange,
  expectIssued,
  tokenExchange,
  userAccessToken,
} from './support.ts';

/**
 * The specification's delegation: the front end signs the user in for API A; API A (a backend
 * application, here driven by openid-client) exchanges that token for one whose audience is API B;
 * API B (here jose) validates it as any access token of the service.
 */
describe('token exchange: the delegated call from API A to API B', () => {
  let service: TestService;
  let setup: Awaited<ReturnType<typeof delegationSetup>>;
  let subjectToken: string;

  before(async () => {
    service = await startService();
    setup = await delegationSetup(service);
    subjectToken = await userAccessToken(service, setup.frontend.id, setup.user, setup.apiA.resource.indicator);
  });
  after(() => service.stop());

  const issuer = () => `${service.url}/oidc`;
  const apiB = () => setup.apiB.resource.indicator;

  /** API B: verifies signature, issuer, audience, type and expiry; then its own policy. */
  async function apiBAccepts(token: string, requiredScopes: string[], trustedClients: string[]): Promise<JWTPayload> {
    const jwks = createRemoteJWKSet(new URL(`${service.url}/oidc/jwks`));
    const { payload } = await jwtVerify(token, jwks, { issuer: issuer(), audience: apiB(), typ: 'at+jwt' });
    const granted = String(payload.scope).split(' ');
    for (const scope of requiredScopes) {
      expect(granted, `scope ${scope}`).to.include(scope);
    }
    expect(trustedClients).to.include(payload.client_id);
    return payload;
  }

  it('advertises the grant in discovery', async () => {
    const { statusCode, body } = await service.http.get('oidc/.well-known/openid-configuration');
    expect(statusCode).to.equal(200);
    expect(body.grant_types_supported).to.include(tokenExchange);
    expect(body.issuer).to.equal(issuer());
  });

  it('API A (openid-client) exchanges the user token; API B (jose) accepts the result', async () => {
    const config = await client.discovery(new URL(issuer()), setup.backend.id, setup.backend.secret, undefined, {
      // eslint-disable-next-line @typescript-eslint/no-deprecated -- deprecated only to stand out: the test service is plain http on 127.0.0.1
      execute: [client.allowInsecureRequests],
    });
    expect(config.serverMetadata().grant_types_supported).to.include(tokenExchange);

    const response = await client.genericGrantRequest(config, tokenExchange, {
      subject_token: subjectToken,
      subject_token_type: accessTokenType,
      resource: apiB(),
      scope: 'read:b write:b',
    });
    expect(response.token_type).to.equal('bearer'); // openid-client normalises the case
    expect(response.expires_in).to.equal(900);
    expect(response.scope).to.equal('read:b write:b');
    expect(response.issued_token_type).to.equal(accessTokenType);

    const payload = await apiBAccepts(response.access_token, ['read:b', 'write:b'], [setup.backend.id]);
    expect(payload.sub).to.equal(setup.user.id);
  });

  it('answers exactly {access_token, issued_token_type, token_type, expires_in, scope} with no-store', async () => {
    const response = await exchange(service, setup.backend, {
      subject_token: subjectToken,
      subject_token_type: accessTokenType,
      resource: apiB(),
      scope: 'read:b write:b',
    });
    const body = expectIssued(response);
    expect(Object.keys(body).sort()).to.deep.equal([
      'access_token',
      'expires_in',
      'issued_token_type',
      'scope',
      'token_type',
    ]);
    expect(body).to.include({
      issued_token_type: 'urn:ietf:params:oauth:token-type:access_token',
      token_type: 'Bearer',
      expires_in: 900,
      scope: 'read:b write:b',
    });
    expect(String(response.headers['content-type'])).to.match(/^application\/json/);
  });

  it('issues an RFC 9068 JWT: typ at+jwt, ES256, the user as sub, the exchanging app as client_id, aud = API B', async () => {
    const { body } = await exchange(service, setup.backend, {
      subject_token: subjectToken,
      subject_token_type: accessTokenType,
      resource: apiB(),
      scope: 'read:b write:b',
    });
    const token = String(body.access_token);
    expect(decodeProtectedHeader(token)).to.include({ typ: 'at+jwt', alg: 'ES256' });
    const payload = await apiBAccepts(token, ['read:b', 'write:b'], [setup.backend.id]);
    expect(payload.sub).to.equal(setup.user.id);
    expect(payload.client_id).to.equal(setup.backend.id);
    expect(payload.aud).to.equal(apiB()); // a string, not an array
    expect(payload.iss).to.equal(issuer());
    expect(payload.scope).to.equal('read:b write:b');
    expect(payload.iat).to.be.a('number');
    expect(payload.exp! - payload.iat!).to.equal(900);
    expect(Math.abs(payload.iat! - Date.now() / 1000)).to.be.below(10);
    expect(payload.jti).to.be.a('string').and.not.equal('');
    expect(payload).not.to.have.property('act');
  });

  it('accepts a subject token issued to another application (the front end) for another audience (API A)', async () => {
    const subject = claimsOf(subjectToken);
    expect(subject.client_id).to.equal(setup.frontend.id);
    expect(subject.aud).to.equal(setup.apiA.resource.indicator);
    const body = expectIssued(
      await exchange(service, setup.backend, {
        subject_token: subjectToken,
        subject_token_type: accessTokenType,
        resource: apiB(),
        scope: 'read:b',
      }),
    );
    expect(claimsOf(body.access_token)).to.include({ sub: setup.user.id, client_id: setup.backend.id, aud: apiB() });
  });

  it('does not consume the subject token: the same token is exchanged twice, giving two distinct tokens', async () => {
    const form = {
      subject_token: subjectToken,
      subject_token_type: accessTokenType,
      resource: apiB(),
      scope: 'read:b',
    };
    const first = expectIssued(await exchange(service, setup.backend, form));
    const second = expectIssued(await exchange(service, setup.backend, form));
    expect(first.scope).to.equal('read:b');
    expect(second.scope).to.equal('read:b');
    expect(claimsOf(first.access_token).jti).not.to.equal(claimsOf(second.access_token).jti);
  });

  it('accepts an opaque user access token (signed in without a resource) as the subject token', async () => {
    const opaque = await userAccessToken(service, setup.frontend.id, setup.user);
    expect(opaque.split('.')).to.have.length(1);
    const body = expectIssued(
      await exchange(service, setup.backend, {
        subject_token: opaque,
        subject_token_type: accessTokenType,
        resource: apiB(),
        scope: 'read:b write:b',
      }),
    );
    expect(body.scope).to.equal('read:b write:b');
    const payload = await apiBAccepts(body.access_token, ['read:b'], [setup.backend.id]);
    expect(payload.sub).to.equal(setup.user.id);
  });

  it('lets a MachineToMachine application with token exchange enabled exchange too', async () => {
    const machine = await createApplication(service, 'MachineToMachine', {
      customClientMetadata: { allowTokenExchange: true },
    });
    const body = expectIssued(
      await exchange(service, machine, {
        subject_token: subjectToken,
        subject_token_type: accessTokenType,
        resource: apiB(),
        scope: 'read:b',
      }),
    );
    expect(body.scope).to.equal('read:b');
    const payload = await apiBAccepts(body.access_token, ['read:b'], [machine.id]);
    expect(payload).to.include({ sub: setup.user.id, client_id: machine.id });
  });

  it('lets a Traditional backend registered without redirect URIs exchange (API A signs nobody in)', async () => {
    const created = await service.api.post('applications', {
      json: { name: 'api-a-backend', type: 'Traditional', customClientMetadata: { allowTokenExchange: true } },
    });
    expect(created.statusCode, JSON.stringify(created.body)).to.equal(200);
    const backend = { id: String(created.body.id), secret: await defaultSecretOf(service, created.body.id) };
    const body = expectIssued(
      await exchange(service, backend, {
        subject_token: subjectToken,
        subject_token_type: accessTokenType,
        resource: apiB(),
        scope: 'read:b',
      }),
    );
    expect(body.scope).to.equal('read:b');
    const payload = await apiBAccepts(body.access_token, ['read:b'], [backend.id]);
    expect(payload).to.include({ sub: setup.user.id, client_id: backend.id });
  });

  it('accepts client_secret_post as well as HTTP Basic', async () => {
    const response = await service.http.post('oidc/token', {
      form: {
        grant_type: tokenExchange,
        client_id: setup.backend.id,
        client_secret: setup.backend.secret,
        subject_token: subjectToken,
        subject_token_type: accessTokenType,
        resource: apiB(),
        scope: 'read:b',
      },
    });
    expect(expectIssued(response).scope).to.equal('read:b');
  });
});
