import { expect } from 'chai';

import { openDatabase } from '../../lib/storage/database.ts';
import { expectError, expectStatus } from '../support/expect.ts';
import { startService, type TestService } from '../support/service.ts';
import { unique } from '../support/values.ts';
import { type Member, type Organization, organizationFixtures, type OrganizationRole } from './support.ts';

describe('management API: organization members', () => {
  let service: TestService;
  const fixtures = organizationFixtures(() => service);
  let organization: Organization;

  before(async () => {
    service = await startService();
  });
  after(() => service.stop());
  beforeEach(async () => {
    organization = await fixtures.createOrganization();
  });

  const users = (id = organization.id) => `organizations/${id}/users`;
  const userRoles = (userId: string, id = organization.id) => `organizations/${id}/users/${userId}/roles`;

  describe('POST /api/organizations/:id/users', () => {
    it('adds users with 201 {userIds}; members already are ignored', async () => {
      const [ann, bob] = [await fixtures.createUser(), await fixtures.createUser()];
      const first = await service.api.post(users(), { json: { userIds: [ann.id] } });
      expectStatus(first, 201);
      expect(first.body).to.deep.equal({ userIds: [ann.id] });

      const second = await service.api.post(users(), { json: { userIds: [ann.id, bob.id, bob.id] } });
      expectStatus(second, 201);
      expect(await fixtures.memberIds(organization.id)).to.deep.equal([ann.id, bob.id].sort());
    });

    it('refuses an unknown user with 422 entity.relation_foreign_key_not_found and adds nobody', async () => {
      const ann = await fixtures.createUser();
      const response = await service.api.post(users(), { json: { userIds: [ann.id, 'no-such-user'] } });
      expectError(response, 422, 'entity.relation_foreign_key_not_found');
      expect(response.body.data).to.deep.equal({ name: 'user', id: 'no-such-user' });
      expect(await fixtures.memberIds(organization.id)).to.deep.equal([]);
    });

    it('answers 404 for an unknown organization and 400 for bad bodies', async () => {
      const ann = await fixtures.createUser();
      expectError(
        await service.api.post(users('nope'), { json: { userIds: [ann.id] } }),
        404,
        'entity.not_exists_with_id',
      );
      for (const json of [
        {},
        { userIds: [] },
        { userIds: [''] },
        { userIds: 'x' },
        { userIds: [ann.id], extra: true },
      ]) {
        expectError(await service.api.post(users(), { json }), 400, 'guard.invalid_input');
      }
    });
  });

  describe('PUT /api/organizations/:id/users', () => {
    it('replaces the members with 204; those leaving lose their organization roles', async () => {
      const [ann, bob, cat] = [await fixtures.createUser(), await fixtures.createUser(), await fixtures.createUser()];
      const role = await fixtures.createRole();
      await fixtures.addUsers(organization.id, [ann.id, bob.id]);
      await fixtures.addUserRoles(organization.id, ann.id, [role.id]);

      const response = await service.api.put(users(), { json: { userIds: [bob.id, cat.id] } });
      expectStatus(response, 204);
      expect(await fixtures.memberIds(organization.id)).to.deep.equal([bob.id, cat.id].sort());

      await fixtures.addUsers(organization.id, [ann.id]);
      expect(await fixtures.roleIdsOfMember(organization.id, ann.id)).to.deep.equal([]);

      expectStatus(await service.api.put(users(), { json: { userIds: [] } }), 204);
      expect(await fixtures.memberIds(organization.id)).to.deep.equal([]);
    });

    it('refuses an unknown user with 422 and changes nothing', async () => {
      const ann = await fixtures.createUser();
      await fixtures.addUsers(organization.id, [ann.id]);
      expectError(
        await service.api.put(users(), { json: { userIds: ['ghost'] } }),
        422,
        'entity.relation_foreign_key_not_found',
      );
      expect(await fixtures.memberIds(organization.id)).to.deep.equal([ann.id]);
      expectError(await service.api.put(users('nope'), { json: { userIds: [] } }), 404, 'entity.not_exists_with_id');
    });
  });

  describe('GET /api/organizations/:id/users', () => {
    it('lists members in Logto’s user shape with their organizationRoles, Total-Number and pagination', async () => {
      const [ann, bob] = [await fixtures.createUser({ name: 'Ann' }), await fixtures.createUser({ name: 'Bob' })];
      const [admin, viewer] = [
        await fixtures.createRole({ name: unique('admin') }),
        await fixtures.createRole({ name: unique('viewer') }),
      ];
      await fixtures.createUser(); // not a member
      await fixtures.addUsers(organization.id, [ann.id, bob.id]);
      await fixtures.addUserRoles(organization.id, ann.id, [admin.id, viewer.id]);

      const response = await service.api.get<Member[]>(users());
      expectStatus(response, 200);
      expect(response.headers['total-number']).to.equal('2');
      const listedAnn = response.body.find(({ id }) => id === ann.id)!;
      expect(listedAnn).to.include.all.keys(
        'id',
        'username',
        'primaryEmail',
        'customData',
        'identities',
        'profile',
        'isSuspended',
        'organizationRoles',
      );
      expect(listedAnn).to.not.have.any.keys('passwordDigest', 'password_digest');
      expect(listedAnn.organizationRoles).to.have.deep.members([
        { id: admin.id, name: admin.name },
        { id: viewer.id, name: viewer.name },
      ]);
      expect(response.body.find(({ id }) => id === bob.id)!.organizationRoles).to.deep.equal([]);

      const page = await service.api.get<Member[]>(users(), { searchParams: { page: 2, page_size: 1 } });
      expect(page.headers['total-number']).to.equal('2');
      expect(page.body).to.have.length(1);

      const searched = await service.api.get<Member[]>(users(), { searchParams: { q: 'ann' } });
      expect(searched.body.map(({ id }) => id)).to.deep.equal([ann.id]);

      const byRole = await service.api.get<Member[]>(users(), { searchParams: { organizationRoleId: viewer.id } });
      expect(byRole.body.map(({ id }) => id)).to.deep.equal([ann.id]);
      expect(byRole.headers['total-number']).to.equal('1');
    });

    it('answers 404 for an unknown organization', async () => {
      expectError(await service.api.get(users('nope')), 404, 'entity.not_exists_with_id');
    });
  });

  describe('DELETE /api/organizations/:id/users/:userId', () => {
    it('removes a member with 204, and their roles; 404 when not a member', async () => {
      const ann = await fixtures.createUser();
      const role = await fixtures.createRole();
      await fixtures.addUsers(organization.id, [ann.id]);
      await fixtures.addUserRoles(organization.id, ann.id, [role.id]);

      const response = await service.api.delete(`${users()}/${ann.id}`);
      expectStatus(response, 204);
      expect(await fixtures.memberIds(organization.id)).to.deep.equal([]);
      expectError(await service.api.delete(`${users()}/${ann.id}`), 404, 'entity.not_exists_with_id');

      await fixtures.addUsers(organization.id, [ann.id]);
      expect(await fixtures.roleIdsOfMember(organization.id, ann.id)).to.deep.equal([]);
      expectError(await service.api.delete(`${users('nope')}/${ann.id}`), 404, 'entity.not_exists_with_id');
    });
  });

  describe('member roles', () => {
    let ann: { id: string };
    beforeEach(async () => {
      ann = await fixtures.createUser();
      await fixtures.addUsers(organization.id, [ann.id]);
    });

    it('GET lists a member’s roles in the OrganizationRole shape', async () => {
      const role = await fixtures.createRole({ description: 'Can do things.' });
      await fixtures.addUserRoles(organization.id, ann.id, [role.id]);
      const response = await service.api.get<OrganizationRole[]>(userRoles(ann.id));
      expectStatus(response, 200);
      expect(response.body).to.deep.equal([role]);
      expect(response.headers['total-number']).to.equal('1');
    });

    it('POST gives roles by id and by name with 201, answering the resolved ids; held roles are ignored', async () => {
      const [byId, byName] = [await fixtures.createRole(), await fixtures.createRole()];
      const response = await service.api.post<{ organizationRoleIds: string[] }>(userRoles(ann.id), {
        json: { organizationRoleIds: [byId.id], organizationRoleNames: [byName.name] },
      });
      expectStatus(response, 201);
      expect(response.body.organizationRoleIds).to.have.members([byId.id, byName.id]);
      expectStatus(await service.api.post(userRoles(ann.id), { json: { organizationRoleIds: [byId.id] } }), 201);
      expect(await fixtures.roleIdsOfMember(organization.id, ann.id)).to.deep.equal([byId.id, byName.id].sort());
    });

    it('PUT replaces the roles with 204', async () => {
      const [first, second, third] = [
        await fixtures.createRole(),
        await fixtures.createRole(),
        await fixtures.createRole(),
      ];
      await fixtures.addUserRoles(organization.id, ann.id, [first.id, second.id]);
      expectStatus(
        await service.api.put(userRoles(ann.id), {
          json: { organizationRoleIds: [second.id], organizationRoleNames: [third.name] },
        }),
        204,
      );
      expect(await fixtures.roleIdsOfMember(organization.id, ann.id)).to.deep.equal([second.id, third.id].sort());
      expectStatus(await service.api.put(userRoles(ann.id), { json: { organizationRoleIds: [] } }), 204);
      expect(await fixtures.roleIdsOfMember(organization.id, ann.id)).to.deep.equal([]);
    });

    it('DELETE takes one role with 204; 404 when not held', async () => {
      const [kept, taken] = [await fixtures.createRole(), await fixtures.createRole()];
      await fixtures.addUserRoles(organization.id, ann.id, [kept.id, taken.id]);
      expectStatus(await service.api.delete(`${userRoles(ann.id)}/${taken.id}`), 204);
      expect(await fixtures.roleIdsOfMember(organization.id, ann.id)).to.deep.equal([kept.id]);
      expectError(await service.api.delete(`${userRoles(ann.id)}/${taken.id}`), 404, 'entity.not_exists_with_id');
    });

    it('refuses unknown roles: names with 422 organization.role_names_not_found, ids with 422, nothing given', async () => {
      const role = await fixtures.createRole();
      const byName = await service.api.post(userRoles(ann.id), {
        json: { organizationRoleIds: [role.id], organizationRoleNames: ['nope-a', 'nope-b'] },
      });
      expectError(byName, 422, 'organization.role_names_not_found');
      expect(byName.body.data).to.deep.equal({ names: ['nope-a', 'nope-b'] });
      const byId = await service.api.post(userRoles(ann.id), {
        json: { organizationRoleIds: [role.id, 'no-such-role'] },
      });
      expectError(byId, 422, 'entity.relation_foreign_key_not_found');
      expect(await fixtures.roleIdsOfMember(organization.id, ann.id)).to.deep.equal([]);
      expectError(
        await service.api.put(userRoles(ann.id), { json: { organizationRoleNames: ['nope'] } }),
        422,
        'organization.role_names_not_found',
      );
    });

    it('refuses MachineToMachine roles for users with 422 entity.db_constraint_violated', async () => {
      const machine = await fixtures.createRole({ type: 'MachineToMachine' });
      expectError(
        await service.api.post(userRoles(ann.id), { json: { organizationRoleIds: [machine.id] } }),
        422,
        'entity.db_constraint_violated',
      );
    });

    it('refuses roles for a non-member with 422 organization.require_membership on every method', async () => {
      const outsider = await fixtures.createUser();
      const role = await fixtures.createRole();
      expectError(await service.api.get(userRoles(outsider.id)), 422, 'organization.require_membership');
      expectError(
        await service.api.post(userRoles(outsider.id), { json: { organizationRoleIds: [role.id] } }),
        422,
        'organization.require_membership',
      );
      expectError(
        await service.api.put(userRoles(outsider.id), { json: { organizationRoleIds: [role.id] } }),
        422,
        'organization.require_membership',
      );
      expectError(
        await service.api.delete(`${userRoles(outsider.id)}/${role.id}`),
        422,
        'organization.require_membership',
      );
      expectError(await service.api.get(userRoles(ann.id, 'nope')), 404, 'entity.not_exists_with_id');
    });

    it('refuses bad bodies with 400', async () => {
      for (const json of [{ organizationRoleIds: 'x' }, { organizationRoleIds: [''] }, { roleIds: [] }]) {
        expectError(await service.api.post(userRoles(ann.id), { json }), 400, 'guard.invalid_input');
      }
    });

    it('GET /scopes lists the organization scopes the member holds through their roles', async () => {
      const [read, write, unused] = [
        await fixtures.createScope(),
        await fixtures.createScope(),
        await fixtures.createScope(),
      ];
      const reader = await fixtures.createRole({ organizationScopeIds: [read.id] });
      const writer = await fixtures.createRole({ organizationScopeIds: [read.id, write.id] });
      await fixtures.addUserRoles(organization.id, ann.id, [reader.id, writer.id]);
      const response = await service.api.get<Array<{ id: string }>>(
        `organizations/${organization.id}/users/${ann.id}/scopes`,
      );
      expectStatus(response, 200);
      expect(response.body).to.have.deep.members([read, write]);
      expect(response.body.map(({ id }) => id)).to.not.include(unused.id);
    });
  });

  describe('POST /api/organizations/:id/users/roles', () => {
    it('gives every role to every member with 201', async () => {
      const [ann, bob] = [await fixtures.createUser(), await fixtures.createUser()];
      const [first, second] = [await fixtures.createRole(), await fixtures.createRole()];
      await fixtures.addUsers(organization.id, [ann.id, bob.id]);
      await fixtures.addUserRoles(organization.id, ann.id, [first.id]);

      const response = await service.api.post(`${users()}/roles`, {
        json: { userIds: [ann.id, bob.id], organizationRoleIds: [first.id, second.id] },
      });
      expectStatus(response, 201);
      expect(await fixtures.roleIdsOfMember(organization.id, ann.id)).to.deep.equal([first.id, second.id].sort());
      expect(await fixtures.roleIdsOfMember(organization.id, bob.id)).to.deep.equal([first.id, second.id].sort());
    });

    it('refuses a non-member with 422 organization.require_membership and gives nothing', async () => {
      const [ann, outsider] = [await fixtures.createUser(), await fixtures.createUser()];
      const role = await fixtures.createRole();
      await fixtures.addUsers(organization.id, [ann.id]);
      const response = await service.api.post(`${users()}/roles`, {
        json: { userIds: [ann.id, outsider.id], organizationRoleIds: [role.id] },
      });
      expectError(response, 422, 'organization.require_membership');
      expect(await fixtures.roleIdsOfMember(organization.id, ann.id)).to.deep.equal([]);
      expectError(
        await service.api.post(`${users()}/roles`, { json: { userIds: [ann.id], organizationRoleIds: [] } }),
        400,
        'guard.invalid_input',
      );
    });
  });

  describe('cascades', () => {
    it('deleting an organization role removes it from members', async () => {
      const ann = await fixtures.createUser();
      const [kept, deleted] = [await fixtures.createRole(), await fixtures.createRole()];
      await fixtures.addUsers(organization.id, [ann.id]);
      await fixtures.addUserRoles(organization.id, ann.id, [kept.id, deleted.id]);
      expectStatus(await service.api.delete(`organization-roles/${deleted.id}`), 204);
      expect(await fixtures.roleIdsOfMember(organization.id, ann.id)).to.deep.equal([kept.id]);
    });

    it('deleting a user removes their memberships and member roles', async () => {
      const [ann, bob] = [await fixtures.createUser(), await fixtures.createUser()];
      const role = await fixtures.createRole();
      await fixtures.addUsers(organization.id, [ann.id, bob.id]);
      await fixtures.addUserRoles(organization.id, ann.id, [role.id]);
      expectStatus(await service.api.delete(`users/${ann.id}`), 204);
      expect(await fixtures.memberIds(organization.id)).to.deep.equal([bob.id]);
      const byRole = await service.api.get<Member[]>(users(), { searchParams: { organizationRoleId: role.id } });
      expect(byRole.body).to.deep.equal([]);
    });

    it('member role changes bump the roles cache version that token permissions are cached under', async () => {
      const db = openDatabase(service.config.dbUrl);
      try {
        const version = async () =>
          // A bigint column: a driver may answer it as a string.
          Number((await db('cache_versions').where({ name: 'roles' }).first<{ version: number | string }>()).version);
        const ann = await fixtures.createUser();
        const role = await fixtures.createRole();
        await fixtures.addUsers(organization.id, [ann.id]);
        const before = await version();
        await fixtures.addUserRoles(organization.id, ann.id, [role.id]);
        const afterAdd = await version();
        expect(afterAdd).to.be.greaterThan(before);
        expectStatus(await service.api.delete(`${users()}/${ann.id}`), 204);
        expect(await version()).to.be.greaterThan(afterAdd);
      } finally {
        await db.destroy();
      }
    });
  });
});
