import { expect } from 'chai';
import { decodeJwt } from 'jose';

import { createApplication, createResource } from '../support/fixtures.ts';
import { startService, type TestService } from '../support/service.ts';
import { signIn } from '../support/sign-in.ts';

const redirectUri = 'http://app.test/callback';

/** As Logto's: an ID token carries the claims its scopes grant, with an API's access token beside it or not. */
describe('ID token claims', () => {
  let service: TestService;
  let client: { clientId: string; redirectUri: string };
  let indicator: string;
  let userId: string;
  const person = { username: 'claimed', password: 'Correct-Horse-9' };

  before(async () => {
    service = await startService();
    indicator = (await createResource(service, ['read'])).resource.indicator;
    const app = await createApplication(service, 'SPA', {
      oidcClientMetadata: { redirectUris: [redirectUri], postLogoutRedirectUris: [] },
    });
    client = { clientId: app.id, redirectUri };
    const user = await service.api.post('users', {
      json: {
        ...person,
        name: 'Claire Claimed',
        avatar: 'https://images.example.com/claire.png',
        primaryEmail: 'claire@example.com',
        primaryPhone: '4915112345678',
        profile: { givenName: 'Claire', familyName: 'Claimed', locale: 'de-DE', address: { locality: 'Berlin' } },
      },
    });
    expect(user.statusCode, JSON.stringify(user.body)).to.equal(200);
    userId = user.body.id;
  });
  after(() => service.stop());

  for (const resource of [true, false]) {
    it(`profile, email and phone claims ${resource ? 'beside an API access token (a JWT)' : 'beside an opaque access token'}`, async () => {
      const tokens = await signIn(service, client, person, {
        scope: 'openid profile email phone',
        ...(resource && { resource: indicator }),
      });
      const claims = decodeJwt(tokens.id_token);
      expect(claims).to.include({
        sub: userId,
        name: 'Claire Claimed',
        username: 'claimed',
        picture: 'https://images.example.com/claire.png',
        email: 'claire@example.com',
        email_verified: true,
        phone_number: '+4915112345678',
        phone_number_verified: true,
        given_name: 'Claire',
        family_name: 'Claimed',
        locale: 'de-DE',
      });
      expect(claims.updated_at).to.be.a('number');
      expect(claims.created_at).to.be.a('number');
    });
  }

  it('a scope not asked gives none of its claims', async () => {
    const tokens = await signIn(service, client, person, { scope: 'openid email', resource: indicator });
    const claims = decodeJwt(tokens.id_token);
    expect(claims).to.include({ email: 'claire@example.com', email_verified: true });
    expect(claims).to.not.have.any.keys('name', 'username', 'picture', 'phone_number', 'given_name', 'address');
  });

  it('address gives the address claim', async () => {
    const tokens = await signIn(service, client, person, { scope: 'openid address' });
    expect(decodeJwt(tokens.id_token).address).to.deep.equal({ locality: 'Berlin' });
  });
});
