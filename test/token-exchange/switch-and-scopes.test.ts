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
  userAccessToken,
} from './support.ts';

const notAllowed = 'token exchange is not allowed for this application';
const publicClientCode = 'application.token_exchange_not_allowed_for_public_client';

describe('token exchange: the application switch and the issued scopes', () => {
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
  const form = (scope?: string, token = subjectToken) => ({
    subject_token: token,
    subject_token_type: accessTokenType,
    resource: apiB(),
    ...(scope !== undefined && { scope }),
  });
  const issuedScope = async (scope?: string, token = subjectToken, application = setup.backend, on = service) =>
    expectIssued(await exchange(on, application, form(scope, token))).scope;
  const setSwitch = (applicationId: string, allowTokenExchange: boolean) =>
    service.api.patch(`applications/${applicationId}`, { json: { customClientMetadata: { allowTokenExchange } } });

  /** A user of their own with the given roles, signed in at the front end for API A. */
  async function userWithRoles(roleIds: string[]) {
    const username = unique('u');
    const password = 'Sturdy-Tulip-7';
    const user = (await service.api.post('users', { json: { username, password } })).body as { id: string };
    if (roleIds.length > 0) {
      expect((await service.api.post(`users/${user.id}/roles`, { json: { roleIds } })).statusCode).to.equal(201);
    }
    const token = await userAccessToken(
      service,
      setup.frontend.id,
      { username, password },
      setup.apiA.resource.indicator,
    );
    return { id: user.id, token };
  }

  /** A Traditional web application (with a redirect URI, as one that signs users in has). */
  const traditional = () =>
    createApplication(service, 'Traditional', {
      oidcClientMetadata: { redirectUris: ['http://web.test/callback'], postLogoutRedirectUris: [] },
    });

  async function createRole(scopeIds: string[]) {
    const response = await service.api.post('roles', {
      json: { name: `r-${Math.random().toString(36).slice(2)}`, description: 'test', scopeIds },
    });
    expect(response.statusCode, JSON.stringify(response.body)).to.be.oneOf([200, 201]);
    return response.body as { id: string };
  }

  describe('the "Allow token exchange" switch', () => {
    it('is off by default for a new Traditional application', async () => {
      const application = await traditional();
      const read = await service.api.get(`applications/${application.id}`);
      expect(read.body.customClientMetadata.allowTokenExchange ?? false).to.equal(false);
      expectOAuthError(await exchange(service, application, form('read:b')), 400, 'unauthorized_client', notAllowed);
    });

    it('switched on by PATCH, the next exchange works; switched off, the very next one is refused', async () => {
      const application = await traditional();
      expectOAuthError(await exchange(service, application, form('read:b')), 400, 'unauthorized_client', notAllowed);

      const on = await setSwitch(application.id, true);
      expect(on.statusCode, JSON.stringify(on.body)).to.equal(200);
      expect(on.body.customClientMetadata.allowTokenExchange).to.equal(true);
      expect(
        (await service.api.get(`applications/${application.id}`)).body.customClientMetadata.allowTokenExchange,
      ).to.equal(true);
      expect(await issuedScope('read:b', subjectToken, application)).to.equal('read:b');

      const off = await setSwitch(application.id, false);
      expect(off.statusCode).to.equal(200);
      expect(off.body.customClientMetadata.allowTokenExchange).to.equal(false);
      expectOAuthError(await exchange(service, application, form('read:b')), 400, 'unauthorized_client', notAllowed);

      // And back again, twice, without any delay: every change is seen by the next request.
      for (let round = 0; round < 2; round++) {
        await setSwitch(application.id, true);
        expect(await issuedScope('read:b', subjectToken, application)).to.equal('read:b');
        await setSwitch(application.id, false);
        expectOAuthError(await exchange(service, application, form('read:b')), 400, 'unauthorized_client', notAllowed);
      }
    });

    it('works the same for a MachineToMachine application', async () => {
      const machine = await createApplication(service, 'MachineToMachine');
      expectOAuthError(await exchange(service, machine, form('read:b')), 400, 'unauthorized_client', notAllowed);
      expect((await setSwitch(machine.id, true)).statusCode).to.equal(200);
      expect(await issuedScope('read:b', subjectToken, machine)).to.equal('read:b');
      expect((await setSwitch(machine.id, false)).statusCode).to.equal(200);
      expectOAuthError(await exchange(service, machine, form('read:b')), 400, 'unauthorized_client', notAllowed);
    });

    it('keeps the other custom client metadata when the switch is sent with it (a PATCH replaces it whole)', async () => {
      const application = await createApplication(service, 'Traditional', {
        customClientMetadata: { idTokenTtl: 600 },
      });
      const current = (await service.api.get(`applications/${application.id}`)).body.customClientMetadata;
      const on = await service.api.patch(`applications/${application.id}`, {
        json: { customClientMetadata: { ...current, allowTokenExchange: true } },
      });
      expect(on.body.customClientMetadata).to.include({ idTokenTtl: 600, allowTokenExchange: true });
    });

    it('refuses to switch it on for an SPA or a Native application (422), which stays off', async () => {
      const spa = await createApplication(service, 'SPA', {
        oidcClientMetadata: { redirectUris: ['http://spa.test/cb'], postLogoutRedirectUris: [] },
      });
      const native = await createApplication(service, 'Native', {
        oidcClientMetadata: { redirectUris: ['com.example.app://cb'], postLogoutRedirectUris: [] },
      });
      for (const application of [spa, native]) {
        const response = await setSwitch(application.id, true);
        expect(response.statusCode, JSON.stringify(response.body)).to.equal(422);
        expect(response.body.code).to.equal(publicClientCode);
        expect(response.body.message).to.be.a('string').and.not.equal('');
        const read = await service.api.get(`applications/${application.id}`);
        expect(read.body.customClientMetadata.allowTokenExchange ?? false).to.equal(false);
      }
    });

    it('refuses to create an SPA or a Native application with it on (422)', async () => {
      for (const type of ['SPA', 'Native']) {
        const response = await service.api.post('applications', {
          json: { name: `public-${type}`, type, customClientMetadata: { allowTokenExchange: true } },
        });
        expect(response.statusCode, JSON.stringify(response.body)).to.equal(422);
        expect(response.body.code).to.equal(publicClientCode);
      }
    });

    it('accepts switching it off on a public application (nothing to refuse)', async () => {
      const spa = await createApplication(service, 'SPA', {
        oidcClientMetadata: { redirectUris: ['http://spa.test/cb'], postLogoutRedirectUris: [] },
      });
      expect((await setSwitch(spa.id, false)).statusCode).to.equal(200);
    });

    it('is seen at once by another instance sharing the database', async () => {
      const other = await startService({ dbUrl: service.config.dbUrl, env: { ENDPOINT: service.config.endpoint } });
      try {
        const application = await traditional();
        expectOAuthError(await exchange(other, application, form('read:b')), 400, 'unauthorized_client', notAllowed);
        await setSwitch(application.id, true);
        expect(await issuedScope('read:b', subjectToken, application, other)).to.equal('read:b');
        await setSwitch(application.id, false);
        expectOAuthError(await exchange(other, application, form('read:b')), 400, 'unauthorized_client', notAllowed);
      } finally {
        await other.stop();
      }
    });
  });

  describe('third-party applications (never, as in Logto)', () => {
    const thirdPartyCode = 'application.third_party_application_cannot_enable_token_exchange';
    const thirdParty = (extra: Record<string, unknown> = {}) =>
      service.api.post('applications', {
        json: {
          name: unique('third-party'),
          type: 'Traditional',
          isThirdParty: true,
          oidcClientMetadata: { redirectUris: ['http://partner.test/cb'], postLogoutRedirectUris: [] },
          ...extra,
        },
      });

    it('refuses to create one with the switch on (422), and creates nothing', async () => {
      const name = unique('third-party');
      const response = await thirdParty({ name, customClientMetadata: { allowTokenExchange: true } });
      expect(response.statusCode, JSON.stringify(response.body)).to.equal(422);
      expect(response.body.code).to.equal(thirdPartyCode);
      expect(response.body.message).to.match(/third-party/i);
      const listed = await service.api.get('applications', { searchParams: { isThirdParty: 'true', page_size: 100 } });
      expect((listed.body as { name: string }[]).map((application) => application.name)).to.not.include(name);
    });

    it('refuses to switch it on for one (422), which stays off; switching off is accepted', async () => {
      const created = await thirdParty();
      expect(created.statusCode, JSON.stringify(created.body)).to.equal(200);
      const response = await setSwitch(created.body.id, true);
      expect(response.statusCode, JSON.stringify(response.body)).to.equal(422);
      expect(response.body.code).to.equal(thirdPartyCode);
      const read = await service.api.get(`applications/${created.body.id}`);
      expect(read.body.customClientMetadata.allowTokenExchange ?? false).to.equal(false);
      expect((await setSwitch(created.body.id, false)).statusCode).to.equal(200);
    });
  });

  describe('downscoping: requested ∩ held on the resource', () => {
    it('drops requested scopes the user does not hold: read:b write:b delete:b → read:b write:b', async () => {
      const response = await exchange(service, setup.backend, form('read:b write:b delete:b'));
      const body = expectIssued(response);
      expect(body.scope).to.equal('read:b write:b');
      expect(claimsOf(body.access_token).scope).to.equal('read:b write:b');
    });

    it('issues no scopes when none is requested: scope "" in the response and the token', async () => {
      const body = expectIssued(await exchange(service, setup.backend, form()));
      expect(body.scope).to.equal('');
      expect(claimsOf(body.access_token)).to.have.property('scope', '');
    });

    it('issues no scopes for an empty scope parameter', async () => {
      const body = expectIssued(await exchange(service, setup.backend, form('')));
      expect(body.scope).to.equal('');
      expect(claimsOf(body.access_token)).to.have.property('scope', '');
    });

    it('issues an empty scope, not an error, when no requested scope is held', async () => {
      const body = expectIssued(await exchange(service, setup.backend, form('delete:b unknown:scope')));
      expect(body.scope).to.equal('');
      expect(claimsOf(body.access_token)).to.have.property('scope', '');
    });

    it('issues a subset requested in any order, once each', async () => {
      expect(await issuedScope('write:b')).to.equal('write:b');
      expect(await issuedScope('write:b read:b')).to.equal('write:b read:b');
      expect(await issuedScope('read:b read:b')).to.equal('read:b');
    });

    it('does not issue scopes of another resource (read:a is held, but on API A)', async () => {
      expect(await issuedScope('read:a read:b')).to.equal('read:b');
    });

    it('does not issue a scope held on another resource under the same name', async () => {
      const apiC = await createResource(service, ['delete:b']);
      const role = await createRole([apiC.scopeIds['delete:b']]);
      const user = await userWithRoles([setup.role.id, role.id]);
      expect(await issuedScope('read:b delete:b', user.token)).to.equal('read:b');
    });

    it('ignores the scopes of the subject token and of the exchanging application', async () => {
      // The subject token carries read:a for API A; the backend application holds no roles at all.
      expect(claimsOf(subjectToken).scope).to.equal('read:a');
      expect(await issuedScope('read:b write:b')).to.equal('read:b write:b');
    });

    it('issues scopes the user holds only through an organization role', async () => {
      const user = await userWithRoles([setup.role.id]);
      const organization = (await service.api.post('organizations', { json: { name: `org-${Math.random()}` } }))
        .body as { id: string };
      expect(
        (await service.api.post(`organizations/${organization.id}/users`, { json: { userIds: [user.id] } })).statusCode,
      ).to.equal(201);
      const organizationRole = await service.api.post('organization-roles', {
        json: { name: `deleter-${Math.random()}`, resourceScopeIds: [setup.apiB.scopeIds['delete:b']] },
      });
      expect(organizationRole.statusCode, JSON.stringify(organizationRole.body)).to.equal(201);
      expect(await issuedScope('read:b write:b delete:b', user.token)).to.equal('read:b write:b');

      const assigned = await service.api.post(`organizations/${organization.id}/users/${user.id}/roles`, {
        json: { organizationRoleIds: [organizationRole.body.id] },
      });
      expect(assigned.statusCode, JSON.stringify(assigned.body)).to.equal(201);
      const body = expectIssued(await exchange(service, setup.backend, form('read:b write:b delete:b', user.token)));
      expect(body.scope).to.equal('read:b write:b delete:b');
      expect(claimsOf(body.access_token).scope).to.equal('read:b write:b delete:b');

      // Taken away again: the next exchange drops it.
      const removed = await service.api.delete(
        `organizations/${organization.id}/users/${user.id}/roles/${organizationRole.body.id}`,
      );
      expect(removed.statusCode).to.equal(204);
      expect(await issuedScope('read:b write:b delete:b', user.token)).to.equal('read:b write:b');
    });

    it('issues organization-role scopes to a user with no user role at all', async () => {
      const user = await userWithRoles([]);
      expect(await issuedScope('read:b write:b', user.token)).to.equal('');
      const organization = (await service.api.post('organizations', { json: { name: `org-${Math.random()}` } }))
        .body as { id: string };
      await service.api.post(`organizations/${organization.id}/users`, { json: { userIds: [user.id] } });
      const organizationRole = (
        await service.api.post('organization-roles', {
          json: { name: `reader-${Math.random()}`, resourceScopeIds: [setup.apiB.scopeIds['read:b']] },
        })
      ).body as { id: string };
      await service.api.post(`organizations/${organization.id}/users/${user.id}/roles`, {
        json: { organizationRoleIds: [organizationRole.id] },
      });
      expect(await issuedScope('read:b write:b', user.token)).to.equal('read:b');

      // A resource scope added to the organization role counts at the next exchange.
      const added = await service.api.post(`organization-roles/${organizationRole.id}/resource-scopes`, {
        json: { scopeIds: [setup.apiB.scopeIds['write:b']] },
      });
      expect(added.statusCode).to.equal(201);
      expect(await issuedScope('read:b write:b', user.token)).to.equal('read:b write:b');
    });
  });

  describe('always current: the scopes held at the time of the exchange', () => {
    it('after the user loses the role, the next exchange issues fewer scopes; given back, more', async () => {
      const role = await createRole([setup.apiB.scopeIds['read:b'], setup.apiB.scopeIds['write:b']]);
      const user = await userWithRoles([role.id]);
      expect(await issuedScope('read:b write:b delete:b', user.token)).to.equal('read:b write:b');

      expect((await service.api.delete(`users/${user.id}/roles/${role.id}`)).statusCode).to.equal(204);
      expect(await issuedScope('read:b write:b delete:b', user.token)).to.equal('');

      expect((await service.api.post(`users/${user.id}/roles`, { json: { roleIds: [role.id] } })).statusCode).to.equal(
        201,
      );
      expect(await issuedScope('read:b write:b delete:b', user.token)).to.equal('read:b write:b');
    });

    it('after a scope is added to the role, the next exchange issues it; removed, it is gone', async () => {
      const role = await createRole([setup.apiB.scopeIds['read:b']]);
      const user = await userWithRoles([role.id]);
      expect(await issuedScope('read:b write:b delete:b', user.token)).to.equal('read:b');

      const added = await service.api.post(`roles/${role.id}/scopes`, {
        json: { scopeIds: [setup.apiB.scopeIds['delete:b']] },
      });
      expect(added.statusCode, JSON.stringify(added.body)).to.be.oneOf([200, 201]);
      expect(await issuedScope('read:b write:b delete:b', user.token)).to.equal('read:b delete:b');

      expect(
        (await service.api.delete(`roles/${role.id}/scopes/${setup.apiB.scopeIds['delete:b']}`)).statusCode,
      ).to.equal(204);
      expect(await issuedScope('read:b write:b delete:b', user.token)).to.equal('read:b');
    });

    it('after the role is deleted, the next exchange issues nothing through it', async () => {
      const role = await createRole([setup.apiB.scopeIds['write:b']]);
      const user = await userWithRoles([role.id]);
      expect(await issuedScope('write:b', user.token)).to.equal('write:b');
      expect((await service.api.delete(`roles/${role.id}`)).statusCode).to.equal(204);
      expect(await issuedScope('write:b', user.token)).to.equal('');
    });

    it('after a scope is deleted from the resource, it is no longer issued', async () => {
      const apiD = await createResource(service, ['x:d', 'y:d']);
      const role = await createRole([apiD.scopeIds['x:d'], apiD.scopeIds['y:d']]);
      const user = await userWithRoles([role.id]);
      const request = {
        subject_token: user.token,
        subject_token_type: accessTokenType,
        resource: apiD.resource.indicator,
        scope: 'x:d y:d',
      };
      expect(expectIssued(await exchange(service, setup.backend, request)).scope).to.equal('x:d y:d');
      expect(
        (await service.api.delete(`resources/${apiD.resource.id}/scopes/${apiD.scopeIds['y:d']}`)).statusCode,
      ).to.equal(204);
      expect(expectIssued(await exchange(service, setup.backend, request)).scope).to.equal('x:d');
    });

    it('uses the resource TTL as it is now (expires_in and exp)', async () => {
      const apiE = await createResource(service, ['e'], 300);
      const request = {
        subject_token: subjectToken,
        subject_token_type: accessTokenType,
        resource: apiE.resource.indicator,
      };
      const before = expectIssued(await exchange(service, setup.backend, request));
      expect(before.expires_in).to.equal(300);
      expect(
        (await service.api.patch(`resources/${apiE.resource.id}`, { json: { accessTokenTtl: 120 } })).statusCode,
      ).to.equal(200);
      const after = expectIssued(await exchange(service, setup.backend, request));
      expect(after.expires_in).to.equal(120);
      const claims = claimsOf(after.access_token);
      expect(claims.exp! - claims.iat!).to.equal(120);
    });

    it('sees a role change made through another instance sharing the database', async () => {
      const other = await startService({ dbUrl: service.config.dbUrl, env: { ENDPOINT: service.config.endpoint } });
      try {
        const role = await createRole([setup.apiB.scopeIds['read:b']]);
        const user = await userWithRoles([role.id]);
        expect(await issuedScope('read:b', user.token, setup.backend, other)).to.equal('read:b');
        await service.api.delete(`users/${user.id}/roles/${role.id}`);
        expect(await issuedScope('read:b', user.token, setup.backend, other)).to.equal('');
      } finally {
        await other.stop();
      }
    });
  });
});
