import { expect } from 'chai';

import { Browser } from '../experience/browser.ts';
import { createUser, identify, passwordVerification, redirectUri } from '../experience/experience-helpers.ts';
import { expectError, expectStatus } from '../support/expect.ts';
import { createApplication, createResource } from '../support/fixtures.ts';
import { startService, type TestService } from '../support/service.ts';
import { ifSet, unique } from '../support/values.ts';

type ConsentScopes = {
  organizationScopes: Array<{ id: string; name: string }>;
  resourceScopes: Array<{ resource: { id: string; indicator: string }; scopes: Array<{ id: string; name: string }> }>;
  organizationResourceScopes: Array<{ resource: { id: string }; scopes: Array<{ id: string }> }>;
  userScopes: string[];
};

/** Logto's `application-user-consent-scope` tests, and what the scopes do on the consent page. */
describe('applications: user consent scopes of a third-party application', () => {
  let service: TestService;
  let thirdParty: { id: string; secret: string };
  let firstParty: { id: string };
  let organizationScopeIds: string[];
  let api: Awaited<ReturnType<typeof createResource>>;

  before(async () => {
    service = await startService();
    thirdParty = await createApplication(service, 'Traditional', {
      isThirdParty: true,
      oidcClientMetadata: { redirectUris: [redirectUri], postLogoutRedirectUris: [] },
    });
    firstParty = await createApplication(service, 'SPA');
    organizationScopeIds = [];
    for (const name of [unique('org-read'), unique('org-write')]) {
      organizationScopeIds.push((await service.api.post('organization-scopes', { json: { name } })).body.id);
    }
    api = await createResource(service, ['read:a', 'write:a', 'read:b', 'write:b']);
  });
  after(() => ifSet(service)?.stop());

  const consentScopesOf = async (id: string) => {
    const response = await service.api.get(`applications/${id}/user-consent-scopes`);
    expectStatus(response, 200);
    return response.body as ConsentScopes;
  };
  const assign = (id: string, json: Record<string, unknown>) =>
    service.api.post(`applications/${id}/user-consent-scopes`, { json });

  it('refuses a first-party application (422) and scopes that do not exist (422), and stores nothing', async () => {
    expectError(
      await assign(firstParty.id, { resourceScopes: [api.scopeIds['read:a']] }),
      422,
      'application.third_party_application_only',
    );
    for (const body of [
      { organizationScopes: ['non-existing-organization-scope'] },
      { resourceScopes: ['non-existing-resource-scope'] },
      { organizationResourceScopes: [api.scopeIds['read:a'], 'non-existing-resource-scope'] },
    ]) {
      const refused = await assign(thirdParty.id, body);
      expectError(refused, 422, 'application.user_consent_scopes_not_found');
    }
    expectError(await assign(thirdParty.id, { userScopes: ['not-a-scope'] }), 400, 'guard.invalid_input');
    expectError(await assign('no-such-application', {}), 404, 'entity.not_exists_with_id');
    expect(await consentScopesOf(thirdParty.id)).to.deep.equal({
      organizationScopes: [],
      resourceScopes: [],
      organizationResourceScopes: [],
      userScopes: [],
    });
  });

  it('assigns all four kinds (twice is no error), lists them by resource, and deletes them one by one', async () => {
    const everything = {
      organizationScopes: organizationScopeIds,
      resourceScopes: [api.scopeIds['read:a'], api.scopeIds['write:a']],
      organizationResourceScopes: [api.scopeIds['read:b'], api.scopeIds['write:b']],
      userScopes: ['profile', 'email', 'urn:logto:scope:organization_roles'],
    };
    expectStatus(await assign(thirdParty.id, everything), 201);
    expectStatus(
      await assign(thirdParty.id, { resourceScopes: [api.scopeIds['read:a']], userScopes: ['profile'] }),
      201,
    );
    const listed = await consentScopesOf(thirdParty.id);
    expect(listed.organizationScopes.map(({ id }) => id).sort()).to.deep.equal([...organizationScopeIds].sort());
    expect(listed.resourceScopes).to.have.length(1);
    expect(listed.resourceScopes[0].resource).to.include({ id: api.resource.id, indicator: api.resource.indicator });
    expect(listed.resourceScopes[0].scopes.map(({ name }) => name).sort()).to.deep.equal(['read:a', 'write:a']);
    expect(listed.organizationResourceScopes[0].scopes.map(({ id }) => id).sort()).to.deep.equal(
      [api.scopeIds['read:b'], api.scopeIds['write:b']].sort(),
    );
    expect([...listed.userScopes].sort()).to.deep.equal(['email', 'profile', 'urn:logto:scope:organization_roles']);

    const remove = (type: string, id: string) =>
      service.api.delete(`applications/${thirdParty.id}/user-consent-scopes/${type}/${encodeURIComponent(id)}`);
    for (const type of ['organization-scopes', 'resource-scopes', 'organization-resource-scopes', 'user-scopes']) {
      expectError(await remove(type, `non-existing-${type}`), 404, 'entity.not_found');
    }
    expectError(
      await service.api.delete(`applications/no-such-application/user-consent-scopes/user-scopes/profile`),
      404,
      'entity.not_exists_with_id',
    );
    expectStatus(await remove('organization-scopes', organizationScopeIds[0]), 204);
    expectStatus(await remove('resource-scopes', api.scopeIds['write:a']), 204);
    expectStatus(await remove('organization-resource-scopes', api.scopeIds['write:b']), 204);
    expectStatus(await remove('user-scopes', 'urn:logto:scope:organization_roles'), 204);
    const after = await consentScopesOf(thirdParty.id);
    expect(after.organizationScopes.map(({ id }) => id)).to.deep.equal([organizationScopeIds[1]]);
    expect(after.resourceScopes[0].scopes.map(({ name }) => name)).to.deep.equal(['read:a']);
    expect(after.organizationResourceScopes[0].scopes.map(({ id }) => id)).to.deep.equal([api.scopeIds['read:b']]);
    expect([...after.userScopes].sort()).to.deep.equal(['email', 'profile']);
  });

  it('a deleted scope leaves the list with it', async () => {
    const other = await createResource(service, ['gone']);
    expectStatus(await assign(thirdParty.id, { resourceScopes: [other.scopeIds.gone] }), 201);
    expectStatus(await service.api.delete(`resources/${other.resource.id}`), 204);
    const listed = await consentScopesOf(thirdParty.id);
    expect(listed.resourceScopes.map(({ resource }) => resource.id)).to.deep.equal([api.resource.id]);
  });

  it('the consent page asks for, and consent grants, only the listed scopes the person holds', async () => {
    // The person holds read:a and write:a; the application may ask for profile, email and read:a.
    const role = await service.api.post('roles', {
      json: {
        name: unique('a-user'),
        description: 'uses A',
        scopeIds: [api.scopeIds['read:a'], api.scopeIds['write:a']],
      },
    });
    const username = unique('consenting');
    const password = 'Granite-Kestrel-64';
    const user = await createUser(service, { username, password });
    expectStatus(await service.api.post(`users/${user.id}/roles`, { json: { roleIds: [role.body.id] } }), 201);

    const browser = new Browser(service);
    await browser.authorize(thirdParty.id, redirectUri, {
      scope: 'openid profile phone offline_access read:a write:a',
      resource: api.resource.indicator,
    });
    expectStatus(await browser.call('put', 'api/experience', { interactionEvent: 'SignIn' }), 204);
    const verification = await passwordVerification(browser, { type: 'username', value: username }, password);
    expectStatus(await identify(browser, { verificationId: verification.body.verificationId }), 204);
    const submitted = await browser.call('post', 'api/experience/submit');
    expectStatus(submitted, 200);
    const resumed = await browser.client.get(submitted.body.redirectTo.replace(`${service.config.endpoint}/`, ''), {
      responseType: 'text',
    });
    expect(resumed.statusCode).to.equal(303);
    expect(resumed.headers.location).to.match(/\/consent/);

    const asked = await browser.call('get', 'api/interaction/consent');
    expectStatus(asked, 200);
    expect([...asked.body.missingOIDCScope].sort()).to.deep.equal(['offline_access', 'profile']);
    expect(asked.body.missingResourceScopes).to.have.length(1);
    expect(asked.body.missingResourceScopes[0].scopes.map(({ name }: { name: string }) => name)).to.deep.equal([
      'read:a',
    ]);

    expectStatus(await browser.call('post', 'api/interaction/consent', {}), 200);
    const grants = await service.api.get(`users/${user.id}/grants`);
    expectStatus(grants, 200);
    const payload = grants.body.grants[0].payload;
    expect(payload.openid.scope.split(' ').sort()).to.deep.equal(['offline_access', 'openid', 'profile']);
    expect(payload.resources[api.resource.indicator]).to.equal('read:a');
  });
});
