import { expect } from 'chai';

import { expectError, expectStatus } from '../support/expect.ts';
import { startService, type TestService } from '../support/service.ts';
import {
  type Application,
  type Organization,
  organizationFixtures,
  type OrganizationRole,
  type RoleReference,
} from './support.ts';

type ApplicationMember = Application & { secret: string; organizationRoles: RoleReference[] };

describe('management API: organization applications', () => {
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

  const applications = (id = organization.id) => `organizations/${id}/applications`;
  const applicationRoles = (applicationId: string, id = organization.id) =>
    `organizations/${id}/applications/${applicationId}/roles`;
  const memberIds = async () =>
    (await service.api.get<ApplicationMember[]>(applications())).body.map(({ id }) => id).sort();
  const roleIdsOf = async (applicationId: string) =>
    (await service.api.get<OrganizationRole[]>(applicationRoles(applicationId))).body.map(({ id }) => id).sort();

  it('POST adds machine-to-machine applications with 201; GET lists them with their organization roles', async () => {
    const [first, second] = [await fixtures.createApplication(), await fixtures.createApplication()];
    const added = await service.api.post(applications(), { json: { applicationIds: [first.id, second.id] } });
    expectStatus(added, 201);
    expectStatus(await service.api.post(applications(), { json: { applicationIds: [first.id] } }), 201);

    const role = await fixtures.createRole({ type: 'MachineToMachine' });
    expectStatus(await service.api.post(applicationRoles(first.id), { json: { organizationRoleIds: [role.id] } }), 201);

    const response = await service.api.get<ApplicationMember[]>(applications());
    expectStatus(response, 200);
    expect(response.headers['total-number']).to.equal('2');
    const listed = response.body.find(({ id }) => id === first.id)!;
    expect(listed).to.include({ id: first.id, name: first.name, type: 'MachineToMachine' });
    expect(listed).to.include.all.keys('oidcClientMetadata', 'customClientMetadata', 'organizationRoles');
    expect(listed.organizationRoles).to.deep.equal([{ id: role.id, name: role.name }]);
    expect(response.body.find(({ id }) => id === second.id)!.organizationRoles).to.deep.equal([]);

    const searched = await service.api.get<ApplicationMember[]>(applications(), { searchParams: { q: second.name } });
    expect(searched.body.map(({ id }) => id)).to.deep.equal([second.id]);
    const page = await service.api.get<ApplicationMember[]>(applications(), {
      searchParams: { page: 1, page_size: 1 },
    });
    expect(page.body).to.have.length(1);
    expect(page.headers['total-number']).to.equal('2');
  });

  it('refuses other application types with 422 entity.db_constraint_violated, and unknown ones with 422', async () => {
    const [machine, web] = [await fixtures.createApplication(), await fixtures.createApplication('Traditional')];
    expectError(
      await service.api.post(applications(), { json: { applicationIds: [machine.id, web.id] } }),
      422,
      'entity.db_constraint_violated',
    );
    expectError(
      await service.api.post(applications(), { json: { applicationIds: ['ghost'] } }),
      422,
      'entity.relation_foreign_key_not_found',
    );
    expectError(
      await service.api.put(applications(), { json: { applicationIds: [web.id] } }),
      422,
      'entity.db_constraint_violated',
    );
    expect(await memberIds()).to.deep.equal([]);
  });

  it('answers 404 for an unknown organization and 400 for bad bodies', async () => {
    const machine = await fixtures.createApplication();
    expectError(
      await service.api.post(applications('nope'), { json: { applicationIds: [machine.id] } }),
      404,
      'entity.not_exists_with_id',
    );
    expectError(await service.api.get(applications('nope')), 404, 'entity.not_exists_with_id');
    expectError(await service.api.post(applications(), { json: { applicationIds: [] } }), 400, 'guard.invalid_input');
    expectError(
      await service.api.post(applications(), { json: { applicationIds: [machine.id], userIds: [] } }),
      400,
      'guard.invalid_input',
    );
  });

  it('PUT replaces the application members with 204; DELETE removes one with 204, 404 when not a member', async () => {
    const [first, second, third] = [
      await fixtures.createApplication(),
      await fixtures.createApplication(),
      await fixtures.createApplication(),
    ];
    await service.api.post(applications(), { json: { applicationIds: [first.id, second.id] } });
    expectStatus(await service.api.put(applications(), { json: { applicationIds: [second.id, third.id] } }), 204);
    expect(await memberIds()).to.deep.equal([second.id, third.id].sort());

    expectStatus(await service.api.delete(`${applications()}/${second.id}`), 204);
    expect(await memberIds()).to.deep.equal([third.id]);
    expectError(await service.api.delete(`${applications()}/${second.id}`), 404, 'entity.not_exists_with_id');
  });

  describe('application member roles', () => {
    let machine: Application;
    beforeEach(async () => {
      machine = await fixtures.createApplication();
      expectStatus(await service.api.post(applications(), { json: { applicationIds: [machine.id] } }), 201);
    });

    it('POST adds, PUT replaces (204), DELETE removes (204) MachineToMachine roles', async () => {
      const [first, second, third] = [
        await fixtures.createRole({ type: 'MachineToMachine' }),
        await fixtures.createRole({ type: 'MachineToMachine' }),
        await fixtures.createRole({ type: 'MachineToMachine' }),
      ];
      expectStatus(
        await service.api.post(applicationRoles(machine.id), { json: { organizationRoleIds: [first.id, second.id] } }),
        201,
      );
      const listed = await service.api.get<OrganizationRole[]>(applicationRoles(machine.id));
      expectStatus(listed, 200);
      expect(listed.body).to.have.deep.members([first, second]);

      expectStatus(
        await service.api.put(applicationRoles(machine.id), { json: { organizationRoleIds: [second.id, third.id] } }),
        204,
      );
      expect(await roleIdsOf(machine.id)).to.deep.equal([second.id, third.id].sort());

      expectStatus(await service.api.delete(`${applicationRoles(machine.id)}/${third.id}`), 204);
      expect(await roleIdsOf(machine.id)).to.deep.equal([second.id]);
      expectError(
        await service.api.delete(`${applicationRoles(machine.id)}/${third.id}`),
        404,
        'entity.not_exists_with_id',
      );
    });

    it('refuses User roles with 422 entity.db_constraint_violated and unknown roles with 422', async () => {
      const userRole = await fixtures.createRole();
      expectError(
        await service.api.post(applicationRoles(machine.id), { json: { organizationRoleIds: [userRole.id] } }),
        422,
        'entity.db_constraint_violated',
      );
      expectError(
        await service.api.post(applicationRoles(machine.id), { json: { organizationRoleIds: ['nope'] } }),
        422,
        'entity.relation_foreign_key_not_found',
      );
      expect(await roleIdsOf(machine.id)).to.deep.equal([]);
    });

    it('refuses roles for a non-member application with 422 organization.require_membership', async () => {
      const outsider = await fixtures.createApplication();
      const role = await fixtures.createRole({ type: 'MachineToMachine' });
      expectError(await service.api.get(applicationRoles(outsider.id)), 422, 'organization.require_membership');
      expectError(
        await service.api.post(applicationRoles(outsider.id), { json: { organizationRoleIds: [role.id] } }),
        422,
        'organization.require_membership',
      );
      expectError(
        await service.api.put(applicationRoles(outsider.id), { json: { organizationRoleIds: [] } }),
        422,
        'organization.require_membership',
      );
      expectError(
        await service.api.delete(`${applicationRoles(outsider.id)}/${role.id}`),
        422,
        'organization.require_membership',
      );
    });

    it('POST /applications/roles gives every role to every application member with 201', async () => {
      const other = await fixtures.createApplication();
      await service.api.post(applications(), { json: { applicationIds: [other.id] } });
      const [first, second] = [
        await fixtures.createRole({ type: 'MachineToMachine' }),
        await fixtures.createRole({ type: 'MachineToMachine' }),
      ];
      const response = await service.api.post(`${applications()}/roles`, {
        json: { applicationIds: [machine.id, other.id], organizationRoleIds: [first.id, second.id] },
      });
      expectStatus(response, 201);
      expect(await roleIdsOf(machine.id)).to.deep.equal([first.id, second.id].sort());
      expect(await roleIdsOf(other.id)).to.deep.equal([first.id, second.id].sort());
    });

    it('removing the application from the organization removes its roles', async () => {
      const role = await fixtures.createRole({ type: 'MachineToMachine' });
      await service.api.post(applicationRoles(machine.id), { json: { organizationRoleIds: [role.id] } });
      expectStatus(await service.api.delete(`${applications()}/${machine.id}`), 204);
      await service.api.post(applications(), { json: { applicationIds: [machine.id] } });
      expect(await roleIdsOf(machine.id)).to.deep.equal([]);
    });
  });

  it('GET /applications/:id/organizations lists an application’s organizations with its roles; deleting the application removes it', async () => {
    const machine = await fixtures.createApplication();
    const other = await fixtures.createOrganization();
    const role = await fixtures.createRole({ type: 'MachineToMachine' });
    await service.api.post(applications(), { json: { applicationIds: [machine.id] } });
    await service.api.post(applications(other.id), { json: { applicationIds: [machine.id] } });
    await service.api.post(applicationRoles(machine.id), { json: { organizationRoleIds: [role.id] } });

    const response = await service.api.get<Array<Organization & { organizationRoles: RoleReference[] }>>(
      `applications/${machine.id}/organizations`,
    );
    expectStatus(response, 200);
    expect(response.headers['total-number']).to.equal('2');
    expect(response.body.find(({ id }) => id === organization.id)).to.deep.equal({
      ...organization,
      organizationRoles: [{ id: role.id, name: role.name }],
    });
    expect(response.body.find(({ id }) => id === other.id)!.organizationRoles).to.deep.equal([]);
    expectError(await service.api.get('applications/ghost/organizations'), 404, 'entity.not_exists_with_id');

    expectStatus(await service.api.delete(`applications/${machine.id}`), 204);
    expect(await memberIds()).to.deep.equal([]);
  });
});
