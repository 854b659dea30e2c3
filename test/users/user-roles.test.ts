import { expect } from 'chai';

import { expectError } from '../support/expect.ts';
import { startService, type TestService } from '../support/service.ts';
import { ifSet, unique } from '../support/values.ts';

type Role = {
  tenantId: string;
  id: string;
  name: string;
  description: string;
  type: 'User' | 'MachineToMachine';
  isDefault: boolean;
};
type RoleListItem = Role & {
  usersCount: number;
  featuredUsers: Array<{ id: string; avatar: string | null; name: string | null }>;
  applicationsCount: number;
  featuredApplications: Array<{ id: string; name: string; type: string }>;
};
type User = {
  id: string;
  username: string | null;
  name: string | null;
  avatar: string | null;
  hasPassword: boolean;
  isSuspended: boolean;
};

describe('management API: user roles', () => {
  let service: TestService;

  async function createUser(body: Record<string, unknown> = {}): Promise<User> {
    const response = await service.api.post<User>('users', { json: { username: unique('user'), ...body } });
    expect(response.statusCode, JSON.stringify(response.body)).to.equal(200);
    return response.body;
  }

  async function createRole(body: Record<string, unknown> = {}): Promise<Role> {
    const response = await service.api.post<Role>('roles', {
      json: { name: unique('role'), description: 'A role made by a test.', ...body },
    });
    expect(response.statusCode, JSON.stringify(response.body)).to.equal(200);
    return response.body;
  }

  /** Setup: gives roles to a user from the user's side. */
  async function assign(userId: string, roleIds: string[]): Promise<void> {
    const response = await service.api.post(`users/${userId}/roles`, { json: { roleIds } });
    expect(response.statusCode, JSON.stringify(response.body)).to.equal(201);
  }

  const roleIdsOf = async (userId: string) =>
    (await service.api.get<Role[]>(`users/${userId}/roles`)).body.map(({ id }) => id).sort();
  const userIdsOf = async (roleId: string) =>
    (await service.api.get<User[]>(`roles/${roleId}/users`)).body.map(({ id }) => id).sort();
  const listedRole = async (roleId: string) =>
    (await service.api.get<RoleListItem[]>('roles')).body.find(({ id }) => id === roleId);

  before(async () => {
    service = await startService();
  });
  after(() => ifSet(service)?.stop());

  describe('GET /api/users/:userId/roles', () => {
    it('lists the roles of a user in the Role shape, with Total-Number', async () => {
      const user = await createUser();
      const empty = await service.api.get<Role[]>(`users/${user.id}/roles`);
      expect(empty.statusCode).to.equal(200);
      expect(empty.body).to.deep.equal([]);
      expect(empty.headers['total-number']).to.equal('0');

      const [first, second] = [await createRole(), await createRole()];
      await assign(user.id, [first.id, second.id]);

      const response = await service.api.get<Role[]>(`users/${user.id}/roles`);
      expect(response.statusCode).to.equal(200);
      expect(response.headers['total-number']).to.equal('2');
      expect(response.body).to.have.deep.members([first, second]);
    });

    it('pages and searches the roles of a user', async () => {
      const user = await createUser();
      const marker = unique('Editor');
      const roles = [
        await createRole({ name: `${marker}-a` }),
        await createRole({ name: `${marker}-b` }),
        await createRole({ description: `Helps the ${marker.toLowerCase()} team.` }),
        await createRole(),
      ];
      await assign(
        user.id,
        roles.map(({ id }) => id),
      );

      const searched = await service.api.get<Role[]>(`users/${user.id}/roles`, {
        searchParams: { search: `%${marker.toUpperCase()}%` },
      });
      expect(searched.body.map(({ id }) => id)).to.have.members(roles.slice(0, 3).map(({ id }) => id));
      expect(searched.headers['total-number']).to.equal('3');

      const page = await service.api.get<Role[]>(`users/${user.id}/roles`, { searchParams: { page: 2, page_size: 3 } });
      expect(page.body).to.have.length(1);
      expect(page.headers['total-number']).to.equal('4');
    });

    it('answers 404 entity.not_exists_with_id for an unknown user', async () => {
      expectError(await service.api.get('users/no-such-user/roles'), 404, 'entity.not_exists_with_id');
    });
  });

  describe('POST /api/users/:userId/roles', () => {
    it('assigns roles with 201 {roleIds, addedRoleIds}, ignoring roles already held', async () => {
      const user = await createUser();
      const [held, fresh] = [await createRole(), await createRole()];
      await assign(user.id, [held.id]);

      const response = await service.api.post(`users/${user.id}/roles`, { json: { roleIds: [held.id, fresh.id] } });
      expect(response.statusCode, JSON.stringify(response.body)).to.equal(201);
      expect(response.body).to.deep.equal({ roleIds: [held.id, fresh.id], addedRoleIds: [fresh.id] });
      expect(await roleIdsOf(user.id)).to.deep.equal([held.id, fresh.id].sort());

      const again = await service.api.post(`users/${user.id}/roles`, { json: { roleIds: [held.id, fresh.id] } });
      expect(again.statusCode).to.equal(201);
      expect(again.body).to.deep.equal({ roleIds: [held.id, fresh.id], addedRoleIds: [] });
    });

    it('refuses a MachineToMachine role with 422 user.invalid_role_type, assigning none of the batch', async () => {
      const user = await createUser();
      const [userRole, machineRole] = [await createRole(), await createRole({ type: 'MachineToMachine' })];

      const response = await service.api.post(`users/${user.id}/roles`, {
        json: { roleIds: [userRole.id, machineRole.id] },
      });
      expectError(response, 422, 'user.invalid_role_type');
      expect(await roleIdsOf(user.id)).to.deep.equal([]);
    });

    it('refuses an unknown role with 404, assigning none of the batch', async () => {
      const user = await createUser();
      const role = await createRole();
      expectError(
        await service.api.post(`users/${user.id}/roles`, { json: { roleIds: [role.id, 'no-such-role'] } }),
        404,
        'entity.not_exists_with_id',
      );
      expect(await roleIdsOf(user.id)).to.deep.equal([]);
    });

    it('answers 404 for an unknown user and 400 for an empty or missing roleIds', async () => {
      const role = await createRole();
      expectError(
        await service.api.post('users/no-such-user/roles', { json: { roleIds: [role.id] } }),
        404,
        'entity.not_exists_with_id',
      );
      const user = await createUser();
      expectError(
        await service.api.post(`users/${user.id}/roles`, { json: { roleIds: [] } }),
        400,
        'guard.invalid_input',
      );
      expectError(await service.api.post(`users/${user.id}/roles`, { json: {} }), 400, 'guard.invalid_input');
      expectError(
        await service.api.post(`users/${user.id}/roles`, { json: { roleIds: role.id } }),
        400,
        'guard.invalid_input',
      );
    });

    it('assigns a role sent several times at once exactly once, answering 201 to each', async () => {
      const user = await createUser();
      const role = await createRole();
      const responses = await Promise.all(
        Array.from({ length: 5 }, () =>
          service.api.post<{ roleIds: string[]; addedRoleIds: string[] }>(`users/${user.id}/roles`, {
            json: { roleIds: [role.id] },
          }),
        ),
      );
      expect(
        responses.map(({ statusCode }) => statusCode),
        JSON.stringify(responses.map(({ body }) => body)),
      ).to.deep.equal([201, 201, 201, 201, 201]);
      expect(responses.flatMap(({ body }) => body.addedRoleIds)).to.deep.equal([role.id]);
      expect(await roleIdsOf(user.id)).to.deep.equal([role.id]);
    });
  });

  describe('PUT /api/users/:userId/roles', () => {
    it('replaces the roles with 200 {roleIds}', async () => {
      const user = await createUser();
      const [a, b, c] = [await createRole(), await createRole(), await createRole()];
      await assign(user.id, [a.id, b.id]);

      const replaced = await service.api.put(`users/${user.id}/roles`, { json: { roleIds: [b.id, c.id] } });
      expect(replaced.statusCode, JSON.stringify(replaced.body)).to.equal(200);
      expect(replaced.body).to.deep.equal({ roleIds: [b.id, c.id] });
      expect(await roleIdsOf(user.id)).to.deep.equal([b.id, c.id].sort());

      const emptied = await service.api.put(`users/${user.id}/roles`, { json: { roleIds: [] } });
      expect(emptied.statusCode).to.equal(200);
      expect(emptied.body).to.deep.equal({ roleIds: [] });
      expect(await roleIdsOf(user.id)).to.deep.equal([]);
    });

    it('refuses a MachineToMachine or unknown role, leaving the roles as they were', async () => {
      const user = await createUser();
      const [kept, other] = [await createRole(), await createRole()];
      const machineRole = await createRole({ type: 'MachineToMachine' });
      await assign(user.id, [kept.id]);

      expectError(
        await service.api.put(`users/${user.id}/roles`, { json: { roleIds: [other.id, machineRole.id] } }),
        422,
        'user.invalid_role_type',
      );
      expect(await roleIdsOf(user.id)).to.deep.equal([kept.id]);

      expectError(
        await service.api.put(`users/${user.id}/roles`, { json: { roleIds: [other.id, 'no-such-role'] } }),
        404,
        'entity.not_exists_with_id',
      );
      expect(await roleIdsOf(user.id)).to.deep.equal([kept.id]);
    });

    it('answers 404 for an unknown user', async () => {
      const role = await createRole();
      expectError(
        await service.api.put('users/no-such-user/roles', { json: { roleIds: [role.id] } }),
        404,
        'entity.not_exists_with_id',
      );
    });
  });

  describe('DELETE /api/users/:userId/roles/:roleId', () => {
    it('removes a role with 204, then 404', async () => {
      const user = await createUser();
      const [removed, kept] = [await createRole(), await createRole()];
      await assign(user.id, [removed.id, kept.id]);

      const response = await service.api.delete(`users/${user.id}/roles/${removed.id}`);
      expect(response.statusCode).to.equal(204);
      expect(response.body).to.equal('');
      expect(await roleIdsOf(user.id)).to.deep.equal([kept.id]);

      expectError(await service.api.delete(`users/${user.id}/roles/${removed.id}`), 404, 'entity.not_exists_with_id');
      // The role itself is untouched.
      expect((await service.api.get(`roles/${removed.id}`)).statusCode).to.equal(200);
    });

    it('answers 404 for an unknown user or role', async () => {
      const role = await createRole();
      const user = await createUser();
      expectError(await service.api.delete(`users/no-such-user/roles/${role.id}`), 404, 'entity.not_exists_with_id');
      expectError(await service.api.delete(`users/${user.id}/roles/no-such-role`), 404, 'entity.not_exists_with_id');
    });
  });

  describe('roles ↔ users, from the role', () => {
    it('assigns a role to users with 201 and lists them as users, with Total-Number', async () => {
      const role = await createRole();
      const [first, second] = [
        await createUser({ name: 'First', password: 'Tr0ub4dor&3x' }),
        await createUser({ name: 'Second' }),
      ];

      const response = await service.api.post(`roles/${role.id}/users`, { json: { userIds: [first.id, second.id] } });
      expect(response.statusCode, JSON.stringify(response.body)).to.equal(201);

      const listed = await service.api.get<User[]>(`roles/${role.id}/users`);
      expect(listed.statusCode).to.equal(200);
      expect(listed.headers['total-number']).to.equal('2');
      expect(listed.body).to.have.deep.members([
        (await service.api.get<User>(`users/${first.id}`)).body,
        (await service.api.get<User>(`users/${second.id}`)).body,
      ]);
      expect(listed.body.find(({ id }) => id === first.id)).to.include({ hasPassword: true });
      expect(JSON.stringify(listed.body)).not.to.match(/digest|argon2/i);

      expect(await roleIdsOf(first.id)).to.deep.equal([role.id]);
    });

    it('searches and pages the users of a role', async () => {
      const role = await createRole();
      const marker = unique('Holder');
      const users = [
        await createUser({ name: `${marker} one` }),
        await createUser({ name: `${marker} two` }),
        await createUser({ name: 'Someone else' }),
      ];
      await service.api.post(`roles/${role.id}/users`, { json: { userIds: users.map(({ id }) => id) } });

      const searched = await service.api.get<User[]>(`roles/${role.id}/users`, {
        searchParams: { search: `${marker.toLowerCase()}%` },
      });
      expect(searched.body.map(({ id }) => id)).to.have.members([users[0].id, users[1].id]);
      expect(searched.headers['total-number']).to.equal('2');

      const page = await service.api.get<User[]>(`roles/${role.id}/users`, { searchParams: { page: 1, page_size: 2 } });
      expect(page.body).to.have.length(2);
      expect(page.headers['total-number']).to.equal('3');
    });

    it('refuses a user already holding the role with 422 role.user_exists, assigning none of the batch', async () => {
      const role = await createRole();
      const [holder, newcomer] = [await createUser(), await createUser()];
      await assign(holder.id, [role.id]);

      const response = await service.api.post(`roles/${role.id}/users`, {
        json: { userIds: [newcomer.id, holder.id] },
      });
      expectError(response, 422, 'role.user_exists');
      expect(await userIdsOf(role.id)).to.deep.equal([holder.id]);
    });

    it('refuses a MachineToMachine role with 422 user.invalid_role_type', async () => {
      const role = await createRole({ type: 'MachineToMachine' });
      const user = await createUser();
      expectError(
        await service.api.post(`roles/${role.id}/users`, { json: { userIds: [user.id] } }),
        422,
        'user.invalid_role_type',
      );
      expect(await roleIdsOf(user.id)).to.deep.equal([]);
    });

    it('answers 404 for an unknown role or user, assigning none of the batch', async () => {
      const role = await createRole();
      const user = await createUser();
      expectError(
        await service.api.post('roles/no-such-role/users', { json: { userIds: [user.id] } }),
        404,
        'entity.not_exists_with_id',
      );
      expectError(await service.api.get('roles/no-such-role/users'), 404, 'entity.not_exists_with_id');
      expectError(
        await service.api.post(`roles/${role.id}/users`, { json: { userIds: [user.id, 'no-such-user'] } }),
        404,
        'entity.not_exists_with_id',
      );
      expect(await userIdsOf(role.id)).to.deep.equal([]);
      expectError(
        await service.api.post(`roles/${role.id}/users`, { json: { userIds: [] } }),
        400,
        'guard.invalid_input',
      );
    });

    it('removes the role from a user with 204, then 404', async () => {
      const role = await createRole();
      const [removed, kept] = [await createUser(), await createUser()];
      await service.api.post(`roles/${role.id}/users`, { json: { userIds: [removed.id, kept.id] } });

      const response = await service.api.delete(`roles/${role.id}/users/${removed.id}`);
      expect(response.statusCode).to.equal(204);
      expect(response.body).to.equal('');
      expect(await userIdsOf(role.id)).to.deep.equal([kept.id]);
      expect(await roleIdsOf(removed.id)).to.deep.equal([]);

      expectError(await service.api.delete(`roles/${role.id}/users/${removed.id}`), 404, 'entity.not_exists_with_id');
      expectError(await service.api.delete(`roles/no-such-role/users/${kept.id}`), 404, 'entity.not_exists_with_id');
    });
  });

  describe('GET /api/roles and users', () => {
    it('shows usersCount and up to three featuredUsers {id, avatar, name}', async () => {
      const role = await createRole();
      const users = [
        await createUser({ name: 'Ann', avatar: 'https://example.com/ann.png' }),
        await createUser({ name: 'Ben' }),
        await createUser(),
        await createUser({ name: 'Dee' }),
      ];
      await service.api.post(`roles/${role.id}/users`, { json: { userIds: users.map(({ id }) => id) } });
      const unused = await createRole();

      const listed = await listedRole(role.id);
      expect(listed).to.include({ usersCount: 4, applicationsCount: 0 });
      expect(listed!.featuredApplications).to.deep.equal([]);
      expect(listed!.featuredUsers).to.have.length(3);
      const shown = users.map(({ id, avatar, name }) => ({ id, avatar, name }));
      for (const featured of listed!.featuredUsers) {
        expect(featured).to.have.all.keys('id', 'avatar', 'name');
        expect(shown).to.deep.include(featured);
      }

      expect(await listedRole(unused.id)).to.deep.equal({
        ...unused,
        usersCount: 0,
        featuredUsers: [],
        applicationsCount: 0,
        featuredApplications: [],
      });
    });

    it('leaves out the roles a user holds with ?excludeUserId= (Logto’s filter)', async () => {
      const marker = unique('excluded');
      const user = await createUser();
      const [held, free] = [await createRole({ name: `${marker}-held` }), await createRole({ name: `${marker}-free` })];
      await assign(user.id, [held.id]);

      const response = await service.api.get<RoleListItem[]>('roles', {
        searchParams: { search: `${marker}%`, excludeUserId: user.id },
      });
      expect(response.statusCode).to.equal(200);
      expect(response.body.map(({ id }) => id)).to.deep.equal([free.id]);
      expect(response.headers['total-number']).to.equal('1');
    });

    it('deleting a user removes it from its roles', async () => {
      const role = await createRole();
      const [doomed, survivor] = [await createUser({ name: 'Doomed' }), await createUser({ name: 'Survivor' })];
      await service.api.post(`roles/${role.id}/users`, { json: { userIds: [doomed.id, survivor.id] } });
      expect((await listedRole(role.id))?.usersCount).to.equal(2);

      expect((await service.api.delete(`users/${doomed.id}`)).statusCode).to.equal(204);

      const listed = await service.api.get<User[]>(`roles/${role.id}/users`);
      expect(listed.body.map(({ id }) => id)).to.deep.equal([survivor.id]);
      expect(listed.headers['total-number']).to.equal('1');
      const item = await listedRole(role.id);
      expect(item?.usersCount).to.equal(1);
      expect(item?.featuredUsers).to.deep.equal([{ id: survivor.id, avatar: null, name: 'Survivor' }]);
    });

    it('deleting a role removes it from its users', async () => {
      const [doomed, kept] = [await createRole(), await createRole()];
      const user = await createUser();
      await assign(user.id, [doomed.id, kept.id]);

      expect((await service.api.delete(`roles/${doomed.id}`)).statusCode).to.equal(204);

      const response = await service.api.get<Role[]>(`users/${user.id}/roles`);
      expect(response.body.map(({ id }) => id)).to.deep.equal([kept.id]);
      expect(response.headers['total-number']).to.equal('1');
      // The user may be given a role of the same name afresh.
      const recreated = await createRole({ name: doomed.name });
      await assign(user.id, [recreated.id]);
      expect(await roleIdsOf(user.id)).to.deep.equal([kept.id, recreated.id].sort());
    });
  });
});
