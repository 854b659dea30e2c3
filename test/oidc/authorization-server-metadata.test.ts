import { expect } from 'chai';
import * as client from 'openid-client';

import { startService, type TestService } from '../support/service.ts';

const tokenExchange = 'urn:ietf:params:oauth:grant-type:token-exchange';
const jwtBearer = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

/** RFC 8414: the OAuth authorization server metadata, beside OpenID Connect discovery. */
describe('authorization server metadata (RFC 8414)', () => {
  let service: TestService;
  before(async () => (service = await startService()));
  after(() => service.stop());

  for (const path of ['.well-known/oauth-authorization-server/oidc', 'oidc/.well-known/oauth-authorization-server']) {
    it(`GET /${path} mirrors discovery's OAuth fields`, async () => {
      const discovery = (await service.http.get('oidc/.well-known/openid-configuration')).body;
      const response = await service.http.get(path);
      expect(response.statusCode).to.equal(200);
      expect(String(response.headers['content-type'])).to.match(/^application\/json/);
      const metadata = response.body;
      expect(metadata.issuer).to.equal(`${service.url}/oidc`);
      expect(metadata.grant_types_supported).to.include.members([tokenExchange, jwtBearer, 'client_credentials']);
      for (const [name, value] of Object.entries(metadata)) {
        expect(value, name).to.deep.equal(discovery[name]);
      }
      for (const name of ['token_endpoint', 'jwks_uri', 'introspection_endpoint', 'revocation_endpoint']) {
        expect(metadata[name], name).to.be.a('string');
      }
      expect('dpop_signing_alg_values_supported' in metadata).to.equal(
        'dpop_signing_alg_values_supported' in discovery,
      );
      // OpenID-only fields stay in discovery.
      expect(metadata).not.to.have.any.keys(
        'userinfo_endpoint',
        'id_token_signing_alg_values_supported',
        'claims_supported',
      );
    });
  }

  it("says the hosted pages' shipped languages as ui_locales_supported, in both documents", async () => {
    for (const path of ['oidc/.well-known/openid-configuration', '.well-known/oauth-authorization-server/oidc']) {
      const { body } = await service.http.get(path);
      expect(body.ui_locales_supported, path).to.deep.equal(['en', 'de', 'fr', 'es', 'ja', 'zh-CN']);
    }
  });

  it('is what openid-client reads as an OAuth 2.0 server', async () => {
    const config = await client.discovery(new URL(`${service.url}/oidc`), 'any-client', undefined, undefined, {
      algorithm: 'oauth2',
      // eslint-disable-next-line @typescript-eslint/no-deprecated -- the test service is plain http on 127.0.0.1
      execute: [client.allowInsecureRequests],
    });
    expect(config.serverMetadata().token_endpoint).to.equal(`${service.url}/oidc/token`);
    expect(config.serverMetadata().grant_types_supported).to.include(jwtBearer);
  });
});
