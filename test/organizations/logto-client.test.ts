import { expect } from 'chai';

import { logtoManagementClient, startService, type TestService } from '../support/service.ts';

/** Organizations through the official Logto management client (`@logto/api`): its bodies and shapes. */
describe('organizations: the @logto/api client', () => {
  let service: TestService;
  let apiClient: ReturnType<typeof logtoManagementClient>;

  before(async () => {
    service = await startService();
    apiClient = logtoManagementClient(service);
  });
  after(() => service.stop());

  it('builds an organization template, an organization with a member holding a role, and an accepted invitation', async () => {
    const scope = await apiClient.POST('/api/organization-scopes', {
      body: { name: 'read:docs', description: 'Read documents' },
    });
    expect(scope.response.status, JSON.stringify(scope.error)).to.equal(201);
    const role = await apiClient.POST('/api/organization-roles', {
      body: { name: 'reader', description: 'Reads', organizationScopeIds: [scope.data!.id], resourceScopeIds: [] },
    });
    expect(role.response.status, JSON.stringify(role.error)).to.equal(201);

    const organization = await apiClient.POST('/api/organizations', {
      body: { name: 'Acme', customData: { tier: 1 } },
    });
    expect(organization.response.status, JSON.stringify(organization.error)).to.equal(201);
    const id = organization.data!.id;

    const user = await apiClient.POST('/api/users', { body: { username: 'alice', primaryEmail: 'alice@example.com' } });
    expect(user.response.status, JSON.stringify(user.error)).to.equal(200);
    const userId = user.data!.id;

    const added = await apiClient.POST('/api/organizations/{id}/users', {
      params: { path: { id } },
      body: { userIds: [userId] },
    });
    expect(added.response.status, JSON.stringify(added.error)).to.equal(201);
    const assigned = await apiClient.POST('/api/organizations/{id}/users/{userId}/roles', {
      params: { path: { id, userId } },
      body: { organizationRoleNames: ['reader'] },
    });
    expect(assigned.response.status, JSON.stringify(assigned.error)).to.equal(201);
    expect(assigned.data).to.deep.equal({ organizationRoleIds: [role.data!.id] });

    const members = await apiClient.GET('/api/organizations/{id}/users', { params: { path: { id } } });
    expect(members.response.status).to.equal(200);
    expect(members.data?.map(({ id: memberId, organizationRoles }) => ({ memberId, organizationRoles }))).to.deep.equal(
      [{ memberId: userId, organizationRoles: [{ id: role.data!.id, name: 'reader' }] }],
    );
    const scopes = await apiClient.GET('/api/organizations/{id}/users/{userId}/scopes', {
      params: { path: { id, userId } },
    });
    expect(scopes.data?.map(({ name }) => name)).to.deep.equal(['read:docs']);

    const invitee = await apiClient.POST('/api/users', { body: { username: 'bob', primaryEmail: 'bob@example.com' } });
    const invitation = await apiClient.POST('/api/organization-invitations', {
      body: {
        invitee: 'bob@example.com',
        organizationId: id,
        expiresAt: Date.now() + 60_000,
        organizationRoleIds: [role.data!.id],
        messagePayload: false,
      },
    });
    expect(invitation.response.status, JSON.stringify(invitation.error)).to.equal(201);
    expect(invitation.data).to.include({ status: 'Pending', invitee: 'bob@example.com' });

    const accepted = await apiClient.PUT('/api/organization-invitations/{id}/status', {
      params: { path: { id: invitation.data!.id } },
      body: { status: 'Accepted', acceptedUserId: invitee.data!.id },
    });
    expect(accepted.response.status, JSON.stringify(accepted.error)).to.equal(200);
    expect(accepted.data).to.include({ status: 'Accepted', acceptedUserId: invitee.data!.id });

    const roles = await apiClient.GET('/api/organizations/{id}/users/{userId}/roles', {
      params: { path: { id, userId: invitee.data!.id } },
    });
    expect(roles.data?.map(({ name }) => name)).to.deep.equal(['reader']);
  });
});
