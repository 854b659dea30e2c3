import { expect } from 'chai';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';

import { createMachineWithScopes, createResource } from '../support/fixtures.ts';
import { startService, type TestService } from '../support/service.ts';

describe('client credentials grant', () => {
  let service: TestService;
  let indicator: string;
  let scopeIds: Record<string, string>;
  let client: { id: string; secret: string };

  before(async () => {
    service = await startService();
    const created = await createResource(service, ['read:b', 'write:b', 'admin:b'], 900);
    indicator = created.resource.indicator;
    scopeIds = created.scopeIds;
    const { application } = await createMachineWithScopes(service, [scopeIds['read:b'], scopeIds['write:b']]);
    client = application;
  });
  after(() => service.stop());

  const request = (form: Record<string, string>, id = client.id, secret = client.secret) =>
    service.token(id, secret, { grant_type: 'client_credentials', ...form });

  it('issues an RFC 9068 JWT for the resource, signed ES256 with a published key', async () => {
    const { statusCode, body } = await request({ resource: indicator, scope: 'read:b write:b' });
    expect(statusCode).to.equal(200);
    expect(body).to.include({ token_type: 'Bearer', expires_in: 900, scope: 'read:b write:b' });

    const token = String(body.access_token);
    expect(decodeProtectedHeader(token)).to.include({ typ: 'at+jwt', alg: 'ES256' });
    const jwks = createRemoteJWKSet(new URL(`${service.url}/oidc/jwks`));
    const { payload } = await jwtVerify(token, jwks, {
      issuer: `${service.url}/oidc`,
      audience: indicator,
      typ: 'at+jwt',
    });
    expect(payload).to.include({ sub: client.id, client_id: client.id, aud: indicator, scope: 'read:b write:b' });
    expect(payload.jti).to.be.a('string');
    expect(payload.exp! - payload.iat!).to.equal(900);
  });

  it('drops requested scopes the application does not hold, and says so in `scope`', async () => {
    const { statusCode, body } = await request({ resource: indicator, scope: 'read:b admin:b' });
    expect(statusCode).to.equal(200);
    expect(body.scope).to.equal('read:b');
  });

  it('puts an empty `scope` claim in a token that grants nothing', async () => {
    const { statusCode, body } = await request({ resource: indicator });
    expect(statusCode).to.equal(200);
    const [, payload] = String(body.access_token).split('.');
    expect(JSON.parse(Buffer.from(payload, 'base64url').toString())).to.have.property('scope', '');
  });

  it('refuses an unknown resource with invalid_target', async () => {
    const { statusCode, body } = await request({ resource: 'https://unknown.example.com', scope: 'read:b' });
    expect(statusCode).to.equal(400);
    expect(body.error).to.equal('invalid_target');
  });

  it('refuses a wrong secret with 401 invalid_client and a Basic challenge', async () => {
    const { statusCode, headers, body } = await request({ resource: indicator }, client.id, 'wrong-secret');
    expect(statusCode).to.equal(401);
    expect(body.error).to.equal('invalid_client');
    expect(String(headers['www-authenticate'])).to.match(/^Basic /);
  });

  it('sees a deleted application on the very next request', async () => {
    const { application } = await createMachineWithScopes(service, [scopeIds['read:b']]);
    expect((await request({ resource: indicator }, application.id, application.secret)).statusCode).to.equal(200);
    expect((await service.api.delete(`applications/${application.id}`)).statusCode).to.equal(204);
    const { statusCode, body } = await request({ resource: indicator }, application.id, application.secret);
    expect(statusCode).to.equal(401);
    expect(body.error).to.equal('invalid_client');
  });

  it('uses a new token TTL as soon as the resource changes', async () => {
    const { resource } = await createResource(service, []);
    const { application } = await createMachineWithScopes(service, []);
    await service.api.patch(`resources/${resource.id}`, { json: { accessTokenTtl: 120 } });
    const { body } = await request({ resource: resource.indicator }, application.id, application.secret);
    expect(body.expires_in).to.equal(120);
  });
});
