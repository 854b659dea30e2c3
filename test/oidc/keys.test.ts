import { expect } from 'chai';
import { createLocalJWKSet, decodeProtectedHeader, type JSONWebKeySet, jwtVerify } from 'jose';

import { adminClient, startService, type TestService } from '../support/service.ts';

describe('signing keys', () => {
  let service: TestService;
  before(async () => {
    service = await startService();
  });
  after(() => service.stop());

  const jwks = async () => (await service.http.get('oidc/jwks')).body as JSONWebKeySet;
  const managementToken = async () => {
    const { body } = await service.token(adminClient.id, adminClient.secret, {
      grant_type: 'client_credentials',
      resource: service.config.managementApiResource,
      scope: 'all',
    });
    return String(body.access_token);
  };
  const callWith = (token: string) =>
    service.http.get('api/applications', { headers: { authorization: `Bearer ${token}` } });

  it('publishes an EC P-256 and an RSA public key, and no private parts', async () => {
    const { keys } = await jwks();
    expect(keys.map((key) => `${key.kty}/${key.alg}`).sort()).to.deep.equal(['EC/ES256', 'RSA/RS256']);
    for (const key of keys) {
      expect(key).to.not.have.any.keys('d', 'p', 'q', 'dp', 'dq', 'qi');
      expect(key.kid).to.be.a('string');
    }
  });

  it('lists keys in Logto shape and rotates: the new key signs, the old one stays published and valid', async () => {
    const before = (await service.api.get('configs/oidc/private-keys')).body as Array<{
      id: string;
      status: string;
      signingKeyAlgorithm: string;
    }>;
    expect(before.map((key) => key.status)).to.deep.equal(['Current', 'Current']);
    const oldToken = await managementToken();
    const oldKid = decodeProtectedHeader(oldToken).kid;

    const rotated = await service.api.post('configs/oidc/private-keys/rotate', { json: { signingKeyAlgorithm: 'EC' } });
    expect(rotated.statusCode).to.equal(200);
    const keys = rotated.body as Array<{ id: string; status: string; signingKeyAlgorithm: string; createdAt: number }>;
    expect(keys).to.have.length(3);
    expect(keys.find((key) => key.id === oldKid)).to.include({ status: 'Previous', signingKeyAlgorithm: 'EC' });

    const newToken = await managementToken();
    const newKid = decodeProtectedHeader(newToken).kid;
    expect(newKid).to.not.equal(oldKid);
    const published = await jwks();
    expect(published.keys.map((key) => key.kid)).to.include.members([oldKid, newKid]);

    // Tokens signed before the rotation keep working until they expire.
    expect((await callWith(oldToken)).statusCode).to.equal(200);
    expect((await callWith(newToken)).statusCode).to.equal(200);
    await jwtVerify(oldToken, createLocalJWKSet(published), { issuer: `${service.url}/oidc` });
  });

  it('refuses to delete the current key and deletes a previous one, which then stops verifying', async () => {
    const keys = (await service.api.get('configs/oidc/private-keys')).body as Array<{ id: string; status: string }>;
    const current = keys.find((key) => key.status === 'Current')!;
    const previous = keys.find((key) => key.status === 'Previous')!;
    const inUse = await service.api.delete(`configs/oidc/private-keys/${current.id}`);
    expect(inUse.statusCode).to.equal(422);
    expect(inUse.body).to.include({ code: 'oidc.only_previous_key_can_be_deleted' });

    expect((await service.api.delete(`configs/oidc/private-keys/${previous.id}`)).statusCode).to.equal(204);
    // The test client's cached management token was signed with the deleted key.
    service.forgetToken();
    expect((await jwks()).keys.map((key) => key.kid)).to.not.include(previous.id);
    expect((await service.api.delete(`configs/oidc/private-keys/${previous.id}`)).statusCode).to.equal(404);
  });

  it('rotates cookie keys without signing anyone out of the API', async () => {
    const response = await service.api.post('configs/oidc/cookie-keys/rotate', { json: {} });
    expect(response.statusCode).to.equal(200);
    expect((response.body as Array<{ status: string }>).map((key) => key.status)).to.deep.equal([
      'Current',
      'Previous',
    ]);
    expect((await service.http.get('oidc/.well-known/openid-configuration')).statusCode).to.equal(200);
  });

  it('answers 400 for an unknown key type', async () => {
    const response = await service.api.post('configs/oidc/other-keys/rotate', { json: {} });
    expect(response.statusCode).to.equal(400);
    expect(response.body).to.include({ code: 'guard.invalid_input' });
  });
});
