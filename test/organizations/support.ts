import { expectStatus } from '../support/expect.ts';
import type { HttpResponse, TestService } from '../support/service.ts';
import { unique } from '../support/values.ts';

/** The shapes the organization tests read; the management API's are Logto's. */
export type Organization = {
  tenantId: string;
  id: string;
  name: string;
  description: string | null;
  customData: Record<string, unknown>;
  isMfaRequired: boolean;
  color: Record<string, unknown>;
  branding: Record<string, unknown>;
  customCss: string | null;
  createdAt: number;
};
export type OrganizationRole = {
  tenantId: string;
  id: string;
  name: string;
  description: string | null;
  type: 'User' | 'MachineToMachine';
};
export type OrganizationScope = { tenantId: string; id: string; name: string; description: string | null };
export type RoleReference = { id: string; name: string };
export type User = {
  id: string;
  username: string | null;
  primaryEmail: string | null;
  name: string | null;
  avatar: string | null;
};
export type Member = User & { organizationRoles: RoleReference[] };
export type Application = { id: string; name: string; type: string };
export type Invitation = {
  tenantId: string;
  id: string;
  inviterId: string | null;
  invitee: string;
  acceptedUserId: string | null;
  organizationId: string;
  status: 'Pending' | 'Accepted' | 'Expired' | 'Revoked';
  createdAt: number;
  updatedAt: number;
  expiresAt: number;
  organizationRoles: RoleReference[];
};
/** Setup calls through the API itself; each asserts its success status. Names are unique per call, so tests sharing a service never collide. */
export function organizationFixtures(service: () => TestService) {
  const api = () => service().api;

  async function created<T>(response: Promise<HttpResponse<T>>, status: number): Promise<T> {
    const resolved = await response;
    expectStatus(resolved, status);
    return resolved.body;
  }

  return {
    createOrganization: (body: Record<string, unknown> = {}) =>
      created<Organization>(api().post('organizations', { json: { name: unique('org'), ...body } }), 201),

    createUser: (body: Record<string, unknown> = {}) => {
      const username = unique('user');
      return created<User>(
        api().post('users', { json: { username, primaryEmail: `${username}@example.com`, ...body } }),
        200,
      );
    },

    createApplication: (type: 'MachineToMachine' | 'Traditional' | 'SPA' = 'MachineToMachine') =>
      created<Application>(api().post('applications', { json: { name: unique('app'), type } }), 200),

    createRole: (body: Record<string, unknown> = {}) =>
      created<OrganizationRole>(api().post('organization-roles', { json: { name: unique('role'), ...body } }), 201),

    createScope: (body: Record<string, unknown> = {}) =>
      created<OrganizationScope>(api().post('organization-scopes', { json: { name: unique('scope'), ...body } }), 201),

    /** An API resource with scopes of the given names; returns their ids by name. */
    async createResourceScopes(names: string[]) {
      const indicator = `https://${unique('api').replaceAll('_', '-')}.example.com`;
      const resource = await created<{ id: string; name: string }>(
        api().post('resources', { json: { name: indicator, indicator } }),
        201,
      );
      const scopes: Record<string, string> = {};
      for (const name of names) {
        scopes[name] = (
          await created<{ id: string }>(api().post(`resources/${resource.id}/scopes`, { json: { name } }), 201)
        ).id;
      }
      return { resource, scopes };
    },

    addUsers: async (organizationId: string, userIds: string[]) => {
      await created(api().post(`organizations/${organizationId}/users`, { json: { userIds } }), 201);
    },

    addUserRoles: async (organizationId: string, userId: string, organizationRoleIds: string[]) => {
      await created(
        api().post(`organizations/${organizationId}/users/${userId}/roles`, { json: { organizationRoleIds } }),
        201,
      );
    },

    memberIds: async (organizationId: string) => {
      const response = await api().get<Member[]>(`organizations/${organizationId}/users`);
      expectStatus(response, 200);
      return response.body.map(({ id }) => id).sort();
    },

    roleIdsOfMember: async (organizationId: string, userId: string) => {
      const response = await api().get<OrganizationRole[]>(`organizations/${organizationId}/users/${userId}/roles`);
      expectStatus(response, 200);
      return response.body.map(({ id }) => id).sort();
    },
  };
}
