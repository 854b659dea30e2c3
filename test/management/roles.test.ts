import { expect } from 'chai';
import { decodeJwt } from 'jose';

import { expectError } from '../support/expect.ts';
import { defaultSecretOf } from '../support/fixtures.ts';
import { adminClient, startService, type TestService } from '../support/service.ts';
import { unique } from '../support/values.ts';

type Role = {
  tenantId: string;
  id: string;
  name: string;
  description: string;
  type: 'User' | 'MachineToMachine';
  isDefault: boolean;
};
type RoleListItem = Role & {
  applicationsCount: number;
  featuredApplications: Array<{ id: string; name: string; type: string }>;
};
type Resource = {
  tenantId: string;
  id: string;
  name: string;
  indicator: string;
  isDefault: boolean;
  accessTokenTtl: number;
  isExchangeTarget: boolean;
};
type Scope = {
  tenantId: string;
  id: string;
  resourceId: string;
  name: string;
  description: string | null;
  createdAt: number;
};
type Application = { id: string; name: string; secret: string; type: string };

const managementRoleId = 'management-api-access';
const managementScopeId = 'management-api-all';

describe('management API: roles', () => {
  let service: TestService;
  /** Names are unique per call, so tests never collide on role names or indicators. */

  async function createRole(body: Record<string, unknown> = {}): Promise<Role> {
    const response = await service.api.post<Role>('roles', {
      json: { name: unique('role'), description: 'A role made by a test.', ...body },
    });
    expect(response.statusCode, JSON.stringify(response.body)).to.equal(200);
    return response.body;
  }

  async function createResource(): Promise<Resource> {
    const name = unique('api');
    const response = await service.api.post<Resource>('resources', {
      json: { name, indicator: `https://${name}.example.com` },
    });
    expect(response.statusCode, JSON.stringify(response.body)).to.equal(201);
    return response.body;
  }

  async function createScope(resourceId: string, name: string): Promise<Scope> {
    const response = await service.api.post<Scope>(`resources/${resourceId}/scopes`, { json: { name } });
    expect(response.statusCode, JSON.stringify(response.body)).to.equal(201);
    return response.body;
  }

  async function createApplication(
    type: 'MachineToMachine' | 'Traditional' = 'MachineToMachine',
  ): Promise<Application> {
    const response = await service.api.post<Application>('applications', { json: { name: unique('app'), type } });
    expect(response.statusCode, JSON.stringify(response.body)).to.equal(200);
    return { ...response.body, secret: await defaultSecretOf(service, response.body.id) };
  }

  /** Setup: gives roles to an application (the application-side POST, which answers 201). */
  async function assignRoles(applicationId: string, roleIds: string[]): Promise<void> {
    const response = await service.api.post(`applications/${applicationId}/roles`, { json: { roleIds } });
    expect(response.statusCode, JSON.stringify(response.body)).to.equal(201);
  }

  const scopesOf = async (roleId: string) =>
    (await service.api.get<Array<Scope & { resource: Resource }>>(`roles/${roleId}/scopes`)).body;
  const applicationIdsOf = async (roleId: string) =>
    (await service.api.get<Application[]>(`roles/${roleId}/applications`)).body.map(({ id }) => id);
  const roleIdsOfApplication = async (applicationId: string) =>
    (await service.api.get<Role[]>(`applications/${applicationId}/roles`)).body.map(({ id }) => id).sort();

  before(async () => {
    service = await startService();
  });
  after(() => service.stop());

  describe('POST /api/roles', () => {
    it('creates a User role by default, in Logto’s Role shape', async () => {
      const name = unique('reader');
      const response = await service.api.post<Role>('roles', { json: { name, description: 'Reads things.' } });
      expect(response.statusCode).to.equal(200);
      expect(response.body).to.have.all.keys('tenantId', 'id', 'name', 'description', 'type', 'isDefault');
      expect(response.body).to.include({ name, description: 'Reads things.', type: 'User', isDefault: false });
      expect(response.body.id).to.be.a('string').and.not.equal('');
      expect(response.body.tenantId).to.be.a('string');
    });

    it('creates a MachineToMachine role', async () => {
      const role = await createRole({ type: 'MachineToMachine', isDefault: false });
      expect(role.type).to.equal('MachineToMachine');
      expect((await service.api.get<Role>(`roles/${role.id}`)).body).to.deep.equal(role);
    });

    it('links the given scopeIds, listed at GET /roles/:id/scopes with their resource', async () => {
      const resource = await createResource();
      const read = await createScope(resource.id, 'read:a');
      const write = await createScope(resource.id, 'write:a');

      const role = await createRole({ scopeIds: [read.id, write.id] });

      const response = await service.api.get<Array<Scope & { resource: Resource }>>(`roles/${role.id}/scopes`);
      expect(response.statusCode).to.equal(200);
      expect(response.headers['total-number']).to.equal('2');
      expect(response.body.map(({ id }) => id)).to.have.members([read.id, write.id]);
      const { tenantId, id, name, indicator } = resource;
      for (const scope of response.body) {
        expect(scope).to.include({ resourceId: resource.id });
        expect(scope).to.include.all.keys(
          'tenantId',
          'id',
          'resourceId',
          'name',
          'description',
          'createdAt',
          'resource',
        );
        expect(scope.resource).to.deep.equal({
          tenantId,
          id,
          name,
          indicator,
          isDefault: false,
          accessTokenTtl: 3600,
          isExchangeTarget: true,
        });
      }
    });

    it('refuses a name already in use with 422 role.name_in_use', async () => {
      const role = await createRole();
      const response = await service.api.post('roles', { json: { name: role.name, description: 'Another one.' } });
      expectError(response, 422, 'role.name_in_use');
    });

    it('refuses a role without a description with 400', async () => {
      const response = await service.api.post('roles', { json: { name: unique('nodesc') } });
      expectError(response, 400, 'guard.invalid_input');
    });

    it('refuses an unknown scopeId with 404 and creates nothing', async () => {
      const resource = await createResource();
      const scope = await createScope(resource.id, 'read:b');
      const name = unique('rollback');

      const response = await service.api.post('roles', {
        json: { name, description: 'Never made.', scopeIds: [scope.id, 'no-such-scope'] },
      });
      expectError(response, 404, 'entity.not_exists_with_id');

      const search = await service.api.get<Role[]>('roles', { searchParams: { search: name } });
      expect(search.body).to.deep.equal([]);
      // The name is still free: the same request without the bad scope succeeds.
      const role = await createRole({ name, scopeIds: [scope.id] });
      expect((await scopesOf(role.id)).map(({ id }) => id)).to.deep.equal([scope.id]);
    });
  });

  describe('GET /api/roles', () => {
    it('lists every role with Total-Number, applicationsCount and featuredApplications', async () => {
      const role = await createRole({ type: 'MachineToMachine' });
      const application = await createApplication();
      await assignRoles(application.id, [role.id]);

      const response = await service.api.get<RoleListItem[]>('roles');
      expect(response.statusCode).to.equal(200);
      expect(response.headers['total-number']).to.equal(String(response.body.length));

      const listed = response.body.find(({ id }) => id === role.id);
      expect(listed).to.deep.equal({
        ...role,
        usersCount: 0,
        featuredUsers: [],
        applicationsCount: 1,
        featuredApplications: [{ id: application.id, name: application.name, type: 'MachineToMachine' }],
      });
      const builtIn = response.body.find(({ id }) => id === managementRoleId);
      expect(builtIn?.applicationsCount).to.equal(1);
      expect(builtIn?.featuredApplications.map(({ id }) => id)).to.deep.equal([adminClient.id]);
    });

    it('filters by ?type=', async () => {
      const user = await createRole();
      const machine = await createRole({ type: 'MachineToMachine' });

      const users = await service.api.get<Role[]>('roles', { searchParams: { type: 'User' } });
      expect(users.statusCode).to.equal(200);
      expect(users.body.every(({ type }) => type === 'User')).to.equal(true);
      expect(users.body.map(({ id }) => id))
        .to.include(user.id)
        .and.not.include(machine.id);
      expect(users.headers['total-number']).to.equal(String(users.body.length));

      const machines = await service.api.get<Role[]>('roles', { searchParams: { type: 'MachineToMachine' } });
      expect(machines.body.every(({ type }) => type === 'MachineToMachine')).to.equal(true);
      expect(machines.body.map(({ id }) => id))
        .to.include.members([machine.id, managementRoleId])
        .and.not.include(user.id);
    });

    it('searches names and descriptions with ?search=', async () => {
      const byName = await createRole({ name: unique('Zebra') });
      const byDescription = await createRole({ description: 'Looks after the zebras.' });
      await createRole({ name: unique('lion') });

      const response = await service.api.get<Role[]>('roles', { searchParams: { search: '%zebra%' } });
      expect(response.statusCode).to.equal(200);
      expect(response.body.map(({ id }) => id)).to.have.members([byName.id, byDescription.id]);
      expect(response.headers['total-number']).to.equal('2');
    });

    it('gets one role by id, and 404 entity.not_exists_with_id for an unknown one', async () => {
      const role = await createRole();
      const found = await service.api.get<Role>(`roles/${role.id}`);
      expect(found.statusCode).to.equal(200);
      expect(found.body).to.deep.equal(role);

      expectError(await service.api.get('roles/no-such-role'), 404, 'entity.not_exists_with_id');
    });
  });

  describe('PATCH and DELETE /api/roles/:id', () => {
    it('updates name, description and isDefault', async () => {
      const role = await createRole();
      const name = unique('renamed');
      const response = await service.api.patch<Role>(`roles/${role.id}`, {
        json: { name, description: 'New words.', isDefault: true },
      });
      expect(response.statusCode).to.equal(200);
      const expected = { ...role, name, description: 'New words.', isDefault: true };
      expect(response.body).to.deep.equal(expected);
      expect((await service.api.get<Role>(`roles/${role.id}`)).body).to.deep.equal(expected);
    });

    it('refuses a rename to a name in use with 422 role.name_in_use', async () => {
      const taken = await createRole();
      const role = await createRole();
      expectError(await service.api.patch(`roles/${role.id}`, { json: { name: taken.name } }), 422, 'role.name_in_use');
      expect((await service.api.get<Role>(`roles/${role.id}`)).body.name).to.equal(role.name);
    });

    it('deletes with 204, after which the role is 404', async () => {
      const role = await createRole();
      const deleted = await service.api.delete(`roles/${role.id}`);
      expect(deleted.statusCode).to.equal(204);
      expect(deleted.body).to.equal('');

      expectError(await service.api.get(`roles/${role.id}`), 404, 'entity.not_exists_with_id');
      expectError(await service.api.delete(`roles/${role.id}`), 404, 'entity.not_exists_with_id');
    });

    it('refuses to delete or patch the built-in management API role with 403 role.internal_role_violation', async () => {
      expectError(await service.api.delete(`roles/${managementRoleId}`), 403, 'role.internal_role_violation');
      expectError(
        await service.api.patch(`roles/${managementRoleId}`, { json: { name: unique('hijack') } }),
        403,
        'role.internal_role_violation',
      );

      const role = await service.api.get<Role>(`roles/${managementRoleId}`);
      expect(role.statusCode).to.equal(200);
      expect(role.body).to.include({ name: 'Management API access', type: 'MachineToMachine' });
    });
  });

  describe('role scopes', () => {
    let resource: Resource;
    before(async () => {
      resource = await createResource();
    });

    it('links scopes with 201 and answers with the scopes', async () => {
      const role = await createRole();
      const first = await createScope(resource.id, unique('s'));
      const second = await createScope(resource.id, unique('s'));

      const response = await service.api.post<Scope[]>(`roles/${role.id}/scopes`, {
        json: { scopeIds: [first.id, second.id] },
      });
      expect(response.statusCode).to.equal(201);
      expect(response.body).to.have.deep.members([first, second]);
      expect((await scopesOf(role.id)).map(({ id }) => id)).to.have.members([first.id, second.id]);
    });

    it('refuses a scope already linked with 422 role.scope_exists', async () => {
      const scope = await createScope(resource.id, unique('s'));
      const role = await createRole({ scopeIds: [scope.id] });
      const response = await service.api.post(`roles/${role.id}/scopes`, { json: { scopeIds: [scope.id] } });
      expectError(response, 422, 'role.scope_exists');
    });

    it('refuses an empty scopeIds array with 400', async () => {
      const role = await createRole();
      expectError(
        await service.api.post(`roles/${role.id}/scopes`, { json: { scopeIds: [] } }),
        400,
        'guard.invalid_input',
      );
    });

    it('unlinks a scope with 204, and 404 when it is not linked any more', async () => {
      const scope = await createScope(resource.id, unique('s'));
      const role = await createRole({ scopeIds: [scope.id] });

      expect((await service.api.delete(`roles/${role.id}/scopes/${scope.id}`)).statusCode).to.equal(204);
      expect(await scopesOf(role.id)).to.deep.equal([]);
      expectError(await service.api.delete(`roles/${role.id}/scopes/${scope.id}`), 404, 'entity.not_exists_with_id');
    });

    it('drops a deleted scope from the roles holding it', async () => {
      const kept = await createScope(resource.id, unique('s'));
      const doomed = await createScope(resource.id, unique('s'));
      const role = await createRole({ scopeIds: [kept.id, doomed.id] });

      expect((await service.api.delete(`resources/${resource.id}/scopes/${doomed.id}`)).statusCode).to.equal(204);
      expect((await scopesOf(role.id)).map(({ id }) => id)).to.deep.equal([kept.id]);
    });

    it('refuses the management API scope on a User role with 400, but links it to a MachineToMachine role', async () => {
      const user = await createRole();
      expectError(
        await service.api.post(`roles/${user.id}/scopes`, { json: { scopeIds: [managementScopeId] } }),
        400,
        'role.management_api_scopes_not_assignable_to_user_role',
      );
      expect(await scopesOf(user.id)).to.deep.equal([]);

      const machine = await createRole({ type: 'MachineToMachine' });
      const response = await service.api.post<Scope[]>(`roles/${machine.id}/scopes`, {
        json: { scopeIds: [managementScopeId] },
      });
      expect(response.statusCode).to.equal(201);
      expect(response.body.map(({ name }) => name)).to.deep.equal(['all']);
    });
  });

  describe('roles ↔ applications, from the role', () => {
    it('assigns a MachineToMachine role to MachineToMachine applications with 201 and lists them', async () => {
      const role = await createRole({ type: 'MachineToMachine' });
      const [first, second] = [await createApplication(), await createApplication()];

      const response = await service.api.post(`roles/${role.id}/applications`, {
        json: { applicationIds: [first.id, second.id] },
      });

      const listed = await service.api.get<Application[]>(`roles/${role.id}/applications`);
      expect(listed.statusCode).to.equal(200);
      expect(listed.headers['total-number']).to.equal('2');
      expect(listed.body.map(({ id }) => id)).to.have.members([first.id, second.id]);
      expect(listed.body.every(({ type }) => type === 'MachineToMachine')).to.equal(true);
      expect(response.statusCode, 'status of the assignment').to.equal(201);
    });

    it('refuses a User role with 422 application.invalid_role_type', async () => {
      const role = await createRole();
      const application = await createApplication();
      const response = await service.api.post(`roles/${role.id}/applications`, {
        json: { applicationIds: [application.id] },
      });
      expectError(response, 422, 'application.invalid_role_type');
      expect(await applicationIdsOf(role.id)).to.deep.equal([]);
    });

    it('refuses an application that is not MachineToMachine with 422 application.invalid_type', async () => {
      const role = await createRole({ type: 'MachineToMachine' });
      const application = await createApplication('Traditional');
      const response = await service.api.post(`roles/${role.id}/applications`, {
        json: { applicationIds: [application.id] },
      });
      expectError(response, 422, 'application.invalid_type');
      expect(await applicationIdsOf(role.id)).to.deep.equal([]);
    });

    it('refuses an application already holding the role with 422 role.application_exists, assigning none of the batch', async () => {
      const role = await createRole({ type: 'MachineToMachine' });
      const [holder, newcomer] = [await createApplication(), await createApplication()];
      await assignRoles(holder.id, [role.id]);

      const response = await service.api.post(`roles/${role.id}/applications`, {
        json: { applicationIds: [newcomer.id, holder.id] },
      });
      expectError(response, 422, 'role.application_exists');
      expect(await applicationIdsOf(role.id)).to.deep.equal([holder.id]);
    });

    it('removes the role from an application with 204', async () => {
      const role = await createRole({ type: 'MachineToMachine' });
      const application = await createApplication();
      await assignRoles(application.id, [role.id]);

      expect((await service.api.delete(`roles/${role.id}/applications/${application.id}`)).statusCode).to.equal(204);
      expect(await applicationIdsOf(role.id)).to.deep.equal([]);
      expectError(
        await service.api.delete(`roles/${role.id}/applications/${application.id}`),
        404,
        'entity.not_exists_with_id',
      );
    });
  });

  describe('roles ↔ applications, from the application', () => {
    it('lists the roles of an application', async () => {
      const role = await createRole({ type: 'MachineToMachine' });
      const application = await createApplication();
      expect(await roleIdsOfApplication(application.id)).to.deep.equal([]);
      await assignRoles(application.id, [role.id]);

      const response = await service.api.get<Role[]>(`applications/${application.id}/roles`);
      expect(response.statusCode).to.equal(200);
      expect(response.headers['total-number']).to.equal('1');
      expect(response.body).to.deep.equal([role]);
    });

    it('assigns roles with 201 {roleIds, addedRoleIds}, ignoring roles already held', async () => {
      const [held, fresh] = [
        await createRole({ type: 'MachineToMachine' }),
        await createRole({ type: 'MachineToMachine' }),
      ];
      const application = await createApplication();
      await assignRoles(application.id, [held.id]);

      const response = await service.api.post(`applications/${application.id}/roles`, {
        json: { roleIds: [held.id, fresh.id] },
      });
      expect(response.statusCode).to.equal(201);
      expect(response.body).to.deep.equal({ roleIds: [held.id, fresh.id], addedRoleIds: [fresh.id] });
      expect(await roleIdsOfApplication(application.id)).to.deep.equal([held.id, fresh.id].sort());
    });

    it('replaces the roles with PUT', async () => {
      const [a, b, c] = [
        await createRole({ type: 'MachineToMachine' }),
        await createRole({ type: 'MachineToMachine' }),
        await createRole({ type: 'MachineToMachine' }),
      ];
      const application = await createApplication();
      await assignRoles(application.id, [a.id, b.id]);

      const replaced = await service.api.put(`applications/${application.id}/roles`, {
        json: { roleIds: [b.id, c.id] },
      });
      expect(await roleIdsOfApplication(application.id)).to.deep.equal([b.id, c.id].sort());

      const emptied = await service.api.put(`applications/${application.id}/roles`, { json: { roleIds: [] } });
      expect(await roleIdsOfApplication(application.id)).to.deep.equal([]);

      expect([replaced.statusCode, emptied.statusCode], 'statuses of the replacements').to.deep.equal([200, 200]);
    });

    it('removes a role with 204, then 404', async () => {
      const role = await createRole({ type: 'MachineToMachine' });
      const application = await createApplication();
      await assignRoles(application.id, [role.id]);

      expect((await service.api.delete(`applications/${application.id}/roles/${role.id}`)).statusCode).to.equal(204);
      expect(await roleIdsOfApplication(application.id)).to.deep.equal([]);
      expectError(
        await service.api.delete(`applications/${application.id}/roles/${role.id}`),
        404,
        'entity.not_exists_with_id',
      );
    });
  });

  describe('the effect of roles on client credentials tokens', () => {
    let resource: Resource;
    let write: Scope;
    let role: Role;
    let application: Application;

    /** The `scope` claim of a client credentials token for the resource, asking for read:x and write:x. */
    async function grantedScope(): Promise<unknown> {
      const response = await service.token(application.id, application.secret, {
        grant_type: 'client_credentials',
        resource: resource.indicator,
        scope: 'read:x write:x',
      });
      expect(response.statusCode, JSON.stringify(response.body)).to.equal(200);
      const claims = decodeJwt(String(response.body.access_token));
      expect(claims.aud).to.equal(resource.indicator);
      return claims.scope;
    }

    before(async () => {
      resource = await createResource();
      const read = await createScope(resource.id, 'read:x');
      write = await createScope(resource.id, 'write:x');
      role = await createRole({ type: 'MachineToMachine', scopeIds: [read.id] });
      application = await createApplication();
      await assignRoles(application.id, [role.id]);
    });

    it('grants only the scopes of the application’s roles', async () => {
      expect(await grantedScope()).to.equal('read:x');
    });

    it('grants a scope linked to the role on the next token request', async () => {
      expect(
        (await service.api.post(`roles/${role.id}/scopes`, { json: { scopeIds: [write.id] } })).statusCode,
      ).to.equal(201);
      expect(await grantedScope()).to.equal('read:x write:x');
    });

    it('grants nothing once the role is taken from the application', async () => {
      expect((await service.api.delete(`applications/${application.id}/roles/${role.id}`)).statusCode).to.equal(204);
      expect(await grantedScope()).to.equal('');
    });
  });
});
