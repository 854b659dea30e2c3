import LogtoClient, { UserScope } from '@logto/node';
import { expect } from 'chai';
import { decodeJwt } from 'jose';

import { Browser } from '../experience/browser.ts';
import { createApplication, createResource } from '../support/fixtures.ts';
import { startService, type TestService } from '../support/service.ts';
import { submitPasswordSignIn } from '../support/sign-in.ts';

const redirectUri = 'http://app.test/callback';

/**
 * Logto's own SDK (@logto/node), configured as Logto's docs configure it: scopes Email, Profile,
 * Organizations and an API resource. The person's browser steps go through the hosted pages' API.
 */
describe("Logto's SDK (@logto/node) with its defaults", () => {
  let service: TestService;
  let indicator: string;
  let app: { id: string; secret: string };
  let userId: string;
  let organizationId: string;
  const person = { username: 'sdk_user', password: 'Correct-Horse-9' };

  before(async () => {
    service = await startService();
    const { resource, scopeIds } = await createResource(service, ['read:notes']);
    indicator = resource.indicator;
    const role = (
      await service.api.post('roles', {
        json: { name: 'note-reader', description: 'r', scopeIds: [scopeIds['read:notes']] },
      })
    ).body;
    userId = (
      await service.api.post('users', { json: { ...person, primaryEmail: 'sdk@example.com', name: 'Sam Dee' } })
    ).body.id;
    await service.api.post(`users/${userId}/roles`, { json: { roleIds: [role.id] } });
    const scope = (await service.api.post('organization-scopes', { json: { name: 'read:members' } })).body;
    const orgRole = (
      await service.api.post('organization-roles', { json: { name: 'member', organizationScopeIds: [scope.id] } })
    ).body;
    organizationId = (await service.api.post('organizations', { json: { name: 'Acme' } })).body.id;
    await service.api.post(`organizations/${organizationId}/users`, { json: { userIds: [userId] } });
    await service.api.post(`organizations/${organizationId}/users/roles`, {
      json: { userIds: [userId], organizationRoleIds: [orgRole.id] },
    });
    app = await createApplication(service, 'Traditional', {
      oidcClientMetadata: { redirectUris: [redirectUri], postLogoutRedirectUris: [] },
    });
  });
  after(() => service.stop());

  it('signs in, reads the claims and userinfo, gets the API token and an organization token', async () => {
    const store = new Map<string, string>();
    let navigated = '';
    const logto = new LogtoClient(
      {
        endpoint: service.url,
        appId: app.id,
        appSecret: app.secret,
        scopes: [UserScope.Email, UserScope.Profile, UserScope.Organizations],
        resources: [indicator],
      },
      {
        navigate: (url) => {
          navigated = url;
        },
        storage: {
          getItem: (key) => Promise.resolve(store.get(key) ?? null),
          setItem: (key, value) => Promise.resolve(void store.set(key, value)),
          removeItem: (key) => Promise.resolve(void store.delete(key)),
        },
      },
    );
    await logto.signIn(redirectUri);
    expect(new URL(navigated).searchParams.get('prompt')).to.equal('consent');

    const browser = new Browser(service);
    const started = await browser.client.get(navigated.replace(`${service.url}/`, ''), { responseType: 'text' });
    expect(started.headers.location, started.body).to.equal('/sign-in');
    const done = await submitPasswordSignIn(browser, person);
    // A first-party application: no consent page, though the SDK sends prompt=consent.
    const back = await browser.followToApplication(String(done.body.redirectTo));
    expect(back.origin + back.pathname).to.equal(redirectUri);
    await logto.handleSignInCallback(back.href);

    expect(await logto.isAuthenticated()).to.equal(true);
    const claims = await logto.getIdTokenClaims();
    expect(claims).to.include({ sub: userId, username: person.username, name: 'Sam Dee', email: 'sdk@example.com' });
    expect(claims.organizations).to.deep.equal([organizationId]);
    expect(await logto.fetchUserInfo()).to.include({ sub: userId, email: 'sdk@example.com' });

    const apiToken = decodeJwt(await logto.getAccessToken(indicator));
    expect(apiToken).to.include({ aud: indicator, scope: '', sub: userId });

    const organizationToken = decodeJwt(await logto.getOrganizationToken(organizationId));
    expect(organizationToken).to.include({ aud: `urn:logto:organization:${organizationId}`, sub: userId });
  });
});
