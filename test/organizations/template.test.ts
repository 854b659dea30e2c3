import { expect } from 'chai';

import { expectError, expectStatus } from '../support/expect.ts';
import { startService, type TestService } from '../support/service.ts';
import { unique } from '../support/values.ts';
import { organizationFixtures, type OrganizationRole, type OrganizationScope } from './support.ts';

type RoleListItem = OrganizationRole & {
  scopes: Array<{ id: string; name: string }>;
  resourceScopes: Array<{ id: string; name: string; resource: { id: string; name: string } }>;
};
type ResourceScope = {
  tenantId: string;
  id: string;
  resourceId: string;
  name: string;
  description: string | null;
  createdAt: number;
};

describe('management API: organization template (scopes and roles)', () => {
  let service: TestService;
  const fixtures = organizationFixtures(() => service);

  before(async () => {
    service = await startService();
  });
  after(() => service.stop());

  describe('/api/organization-scopes', () => {
    it('creates with 201, gets, lists by name with q and pagination', async () => {
      const name = unique('read');
      const response = await service.api.post<OrganizationScope>('organization-scopes', {
        json: { name, description: 'Read things.' },
      });
      expectStatus(response, 201);
      expect(response.body).to.have.all.keys('tenantId', 'id', 'name', 'description');
      expect(response.body).to.include({ name, description: 'Read things.' });
      expect((await service.api.get(`organization-scopes/${response.body.id}`)).body).to.deep.equal(response.body);

      const prefix = unique('listed');
      const [b, a] = [
        await fixtures.createScope({ name: `${prefix}_b` }),
        await fixtures.createScope({ name: `${prefix}_a` }),
      ];
      const listed = await service.api.get<OrganizationScope[]>('organization-scopes', { searchParams: { q: prefix } });
      expectStatus(listed, 200);
      expect(listed.headers['total-number']).to.equal('2');
      expect(listed.body.map(({ id }) => id)).to.deep.equal([a.id, b.id]);
      const page = await service.api.get<OrganizationScope[]>('organization-scopes', {
        searchParams: { q: prefix, page: 2, page_size: 1 },
      });
      expect(page.body.map(({ id }) => id)).to.deep.equal([b.id]);
    });

    it('refuses a name in use with 422 and bad bodies with 400', async () => {
      const scope = await fixtures.createScope();
      expectError(
        await service.api.post('organization-scopes', { json: { name: scope.name } }),
        422,
        'entity.unique_integrity_violation',
      );
      for (const json of [
        {},
        { name: '' },
        { name: 'has space' },
        { name: 'ok', other: 1 },
        { name: 'x'.repeat(129) },
      ]) {
        expectError(await service.api.post('organization-scopes', { json }), 400, 'guard.invalid_input');
      }
    });

    it('patches with 200 (name conflicts 422), deletes with 204 (roles lose it), 404 for unknown ids', async () => {
      const [scope, taken] = [await fixtures.createScope(), await fixtures.createScope()];
      const renamed = unique('renamed');
      const patched = await service.api.patch<OrganizationScope>(`organization-scopes/${scope.id}`, {
        json: { name: renamed, description: null },
      });
      expectStatus(patched, 200);
      expect(patched.body).to.deep.equal({ ...scope, name: renamed, description: null });
      expectError(
        await service.api.patch(`organization-scopes/${scope.id}`, { json: { name: taken.name } }),
        422,
        'entity.unique_integrity_violation',
      );
      expectStatus(await service.api.patch(`organization-scopes/${scope.id}`, { json: { name: renamed } }), 200);

      const role = await fixtures.createRole({ organizationScopeIds: [scope.id, taken.id] });
      expectStatus(await service.api.delete(`organization-scopes/${scope.id}`), 204);
      const remaining = await service.api.get<OrganizationScope[]>(`organization-roles/${role.id}/scopes`);
      expect(remaining.body.map(({ id }) => id)).to.deep.equal([taken.id]);

      expectError(await service.api.get(`organization-scopes/${scope.id}`), 404, 'entity.not_exists_with_id');
      expectError(
        await service.api.patch(`organization-scopes/${scope.id}`, { json: { name: 'x' } }),
        404,
        'entity.not_exists_with_id',
      );
      expectError(await service.api.delete(`organization-scopes/${scope.id}`), 404, 'entity.not_exists_with_id');
    });
  });

  describe('/api/organization-roles', () => {
    it('creates a User role by default with 201, with its organization scopes and resource scopes', async () => {
      const scope = await fixtures.createScope();
      const { resource, scopes } = await fixtures.createResourceScopes(['read:x', 'write:x']);
      const name = unique('admin');
      const response = await service.api.post<OrganizationRole>('organization-roles', {
        json: {
          name,
          description: 'Administers.',
          organizationScopeIds: [scope.id],
          resourceScopeIds: [scopes['read:x'], scopes['write:x']],
        },
      });
      expectStatus(response, 201);
      expect(response.body).to.have.all.keys('tenantId', 'id', 'name', 'description', 'type');
      expect(response.body).to.include({ name, description: 'Administers.', type: 'User' });
      expect((await service.api.get(`organization-roles/${response.body.id}`)).body).to.deep.equal(response.body);

      const listed = await service.api.get<RoleListItem[]>('organization-roles', { searchParams: { q: name } });
      expectStatus(listed, 200);
      expect(listed.body).to.deep.equal([
        {
          ...response.body,
          scopes: [{ id: scope.id, name: scope.name }],
          resourceScopes: [
            { id: scopes['read:x'], name: 'read:x', resource: { id: resource.id, name: resource.name } },
            { id: scopes['write:x'], name: 'write:x', resource: { id: resource.id, name: resource.name } },
          ],
        },
      ]);
      const machine = await fixtures.createRole({ type: 'MachineToMachine' });
      expect(machine.type).to.equal('MachineToMachine');
    });

    it('creates nothing when a scope id is unknown (422), and refuses names in use (422) and bad bodies (400)', async () => {
      const scope = await fixtures.createScope();
      const name = unique('atomic');
      const unknownScope = await service.api.post('organization-roles', {
        json: { name, organizationScopeIds: [scope.id, 'nope'] },
      });
      expectError(unknownScope, 422, 'entity.relation_foreign_key_not_found');
      expect(unknownScope.body.data).to.deep.equal({ name: 'organization scope', id: 'nope' });
      expectError(
        await service.api.post('organization-roles', { json: { name, resourceScopeIds: ['nope'] } }),
        422,
        'entity.relation_foreign_key_not_found',
      );
      expect(
        (await service.api.get<RoleListItem[]>('organization-roles', { searchParams: { q: name } })).body,
      ).to.deep.equal([]);

      const role = await fixtures.createRole({ name });
      expectError(
        await service.api.post('organization-roles', { json: { name: role.name } }),
        422,
        'entity.unique_integrity_violation',
      );
      for (const json of [
        {},
        { name: '' },
        { name: 'a', type: 'Robot' },
        { name: 'a', scopeIds: [] },
        { name: 'a', organizationScopeIds: 'x' },
      ]) {
        expectError(await service.api.post('organization-roles', { json }), 400, 'guard.invalid_input');
      }
    });

    it('lists by name with Total-Number and pagination', async () => {
      const prefix = unique('sorted');
      const [b, a, c] = [
        await fixtures.createRole({ name: `${prefix}_b` }),
        await fixtures.createRole({ name: `${prefix}_a` }),
        await fixtures.createRole({ name: `${prefix}_c` }),
      ];
      const all = await service.api.get<RoleListItem[]>('organization-roles', { searchParams: { q: prefix } });
      expect(all.headers['total-number']).to.equal('3');
      expect(all.body.map(({ id }) => id)).to.deep.equal([a.id, b.id, c.id]);
      const page = await service.api.get<RoleListItem[]>('organization-roles', {
        searchParams: { q: prefix, page: 2, page_size: 2 },
      });
      expect(page.body.map(({ id }) => id)).to.deep.equal([c.id]);
      expect(page.headers['total-number']).to.equal('3');
    });

    it('patches name and description with 200; the type is fixed; 404 and 422 as the scopes', async () => {
      const [role, taken] = [await fixtures.createRole(), await fixtures.createRole()];
      const name = unique('renamed');
      const patched = await service.api.patch<OrganizationRole>(`organization-roles/${role.id}`, {
        json: { name, description: 'Now described.' },
      });
      expectStatus(patched, 200);
      expect(patched.body).to.deep.equal({ ...role, name, description: 'Now described.' });
      expectError(
        await service.api.patch(`organization-roles/${role.id}`, { json: { type: 'MachineToMachine' } }),
        400,
        'guard.invalid_input',
      );
      expectError(
        await service.api.patch(`organization-roles/${role.id}`, { json: { name: taken.name } }),
        422,
        'entity.unique_integrity_violation',
      );
      expectError(
        await service.api.patch('organization-roles/nope', { json: { name: 'x' } }),
        404,
        'entity.not_exists_with_id',
      );
    });

    it('deletes with 204; then 404', async () => {
      const role = await fixtures.createRole();
      expectStatus(await service.api.delete(`organization-roles/${role.id}`), 204);
      expectError(await service.api.get(`organization-roles/${role.id}`), 404, 'entity.not_exists_with_id');
      expectError(await service.api.delete(`organization-roles/${role.id}`), 404, 'entity.not_exists_with_id');
    });
  });

  describe('/api/organization-roles/:id/scopes', () => {
    it('adds (201, existing ignored), lists, replaces (204) and removes (204) organization scopes', async () => {
      const role = await fixtures.createRole();
      const [a, b, c] = [await fixtures.createScope(), await fixtures.createScope(), await fixtures.createScope()];
      const path = `organization-roles/${role.id}/scopes`;
      expectStatus(await service.api.post(path, { json: { organizationScopeIds: [a.id, b.id] } }), 201);
      expectStatus(await service.api.post(path, { json: { organizationScopeIds: [a.id] } }), 201);
      const listed = await service.api.get<OrganizationScope[]>(path);
      expectStatus(listed, 200);
      expect(listed.headers['total-number']).to.equal('2');
      expect(listed.body).to.have.deep.members([a, b]);

      expectStatus(await service.api.put(path, { json: { organizationScopeIds: [b.id, c.id] } }), 204);
      expect((await service.api.get<OrganizationScope[]>(path)).body.map(({ id }) => id)).to.have.members([b.id, c.id]);

      expectStatus(await service.api.delete(`${path}/${b.id}`), 204);
      expect((await service.api.get<OrganizationScope[]>(path)).body.map(({ id }) => id)).to.deep.equal([c.id]);
      expectError(await service.api.delete(`${path}/${b.id}`), 404, 'entity.not_exists_with_id');
    });

    it('refuses unknown scopes (422, nothing changed), unknown roles (404) and empty POSTs (400)', async () => {
      const role = await fixtures.createRole();
      const scope = await fixtures.createScope();
      const path = `organization-roles/${role.id}/scopes`;
      await service.api.post(path, { json: { organizationScopeIds: [scope.id] } });
      expectError(
        await service.api.put(path, { json: { organizationScopeIds: ['nope'] } }),
        422,
        'entity.relation_foreign_key_not_found',
      );
      expect((await service.api.get<OrganizationScope[]>(path)).body.map(({ id }) => id)).to.deep.equal([scope.id]);
      expectError(
        await service.api.post('organization-roles/nope/scopes', { json: { organizationScopeIds: [scope.id] } }),
        404,
        'entity.not_exists_with_id',
      );
      expectError(await service.api.get('organization-roles/nope/scopes'), 404, 'entity.not_exists_with_id');
      expectError(await service.api.post(path, { json: { organizationScopeIds: [] } }), 400, 'guard.invalid_input');
    });
  });

  describe('/api/organization-roles/:id/resource-scopes', () => {
    it('adds, lists in the Scope shape, replaces and removes API resource scopes', async () => {
      const role = await fixtures.createRole();
      const { resource, scopes } = await fixtures.createResourceScopes(['a', 'b', 'c']);
      const path = `organization-roles/${role.id}/resource-scopes`;
      expectStatus(await service.api.post(path, { json: { scopeIds: [scopes.a, scopes.b] } }), 201);
      const listed = await service.api.get<ResourceScope[]>(path);
      expectStatus(listed, 200);
      expect(listed.headers['total-number']).to.equal('2');
      expect(listed.body.map(({ id }) => id)).to.deep.equal([scopes.a, scopes.b]);
      expect(listed.body[0]).to.have.all.keys('tenantId', 'id', 'resourceId', 'name', 'description', 'createdAt');
      expect(listed.body[0]).to.include({ resourceId: resource.id, name: 'a' });

      expectStatus(await service.api.put(path, { json: { scopeIds: [scopes.c] } }), 204);
      expect((await service.api.get<ResourceScope[]>(path)).body.map(({ id }) => id)).to.deep.equal([scopes.c]);
      expectStatus(await service.api.delete(`${path}/${scopes.c}`), 204);
      expect((await service.api.get<ResourceScope[]>(path)).body).to.deep.equal([]);
      expectError(await service.api.delete(`${path}/${scopes.c}`), 404, 'entity.not_exists_with_id');
      expectError(
        await service.api.post(path, { json: { scopeIds: ['nope'] } }),
        422,
        'entity.relation_foreign_key_not_found',
      );
    });

    it('refuses the management API’s scope for User roles with 400, as user roles do; MachineToMachine roles may hold it', async () => {
      const managementScopeId = 'management-api-all';
      const userRole = await fixtures.createRole();
      const path = `organization-roles/${userRole.id}/resource-scopes`;
      expectError(
        await service.api.post(path, { json: { scopeIds: [managementScopeId] } }),
        400,
        'role.management_api_scopes_not_assignable_to_user_role',
      );
      expectError(
        await service.api.put(path, { json: { scopeIds: [managementScopeId] } }),
        400,
        'role.management_api_scopes_not_assignable_to_user_role',
      );
      expectError(
        await service.api.post('organization-roles', {
          json: { name: unique('sneaky'), resourceScopeIds: [managementScopeId] },
        }),
        400,
        'role.management_api_scopes_not_assignable_to_user_role',
      );
      const machineRole = await fixtures.createRole({
        type: 'MachineToMachine',
        resourceScopeIds: [managementScopeId],
      });
      const listed = await service.api.get<ResourceScope[]>(`organization-roles/${machineRole.id}/resource-scopes`);
      expect(listed.body.map(({ id }) => id)).to.deep.equal([managementScopeId]);
    });

    it('deleting an API resource scope removes it from organization roles', async () => {
      const { resource, scopes } = await fixtures.createResourceScopes(['gone', 'kept']);
      const role = await fixtures.createRole({ resourceScopeIds: [scopes.gone, scopes.kept] });
      expectStatus(await service.api.delete(`resources/${resource.id}/scopes/${scopes.gone}`), 204);
      const listed = await service.api.get<ResourceScope[]>(`organization-roles/${role.id}/resource-scopes`);
      expect(listed.body.map(({ id }) => id)).to.deep.equal([scopes.kept]);
    });
  });
});
