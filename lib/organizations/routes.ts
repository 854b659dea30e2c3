import { z } from 'zod';

import { pageOf, setTotal } from '../http/api/pagination.ts';
import type { Api } from '../http/api/route.ts';
import { searchListQuery } from '../http/api/search.ts';
import type { ServiceContext } from '../http/context.ts';
import type { Connectors } from '../messages/index.ts';
import { idParams } from '../shared/entity-id.ts';
import { invitationRoutes } from './invitations/invitation-routes.ts';
import { jitRoutes } from './jit/jit-routes.ts';
import { getOrganization } from './lookups.ts';
import { applicationMemberRoutes } from './members/application-member-routes.ts';
import { memberRoutes } from './members/member-routes.ts';
import { createOrganization, patchOrganization, removeOrganization } from './organizations.ts';
import { featuredMembers, listOrganizations, organizationSearchColumns } from './queries.ts';
import { roleGrantRoutes } from './roles/role-grant-routes.ts';
import { organizationRoleRoutes } from './roles/role-routes.ts';
import {
  createOrganizationBody,
  organizationListItemSchema,
  organizationSchema,
  updateOrganizationBody,
} from './schemas.ts';
import { organizationScopeRoutes } from './scopes/scope-routes.ts';

const tag = 'Organizations';

/**
 * Organizations, their members and roles, organization roles and scopes, invitations (emailed
 * through `messages`, the message connectors).
 */
export function organizationRoutes(api: Api, { db, cache, messages }: ServiceContext & { messages: Connectors }): void {
  api.add(
    {
      method: 'get',
      path: '/organizations',
      summary: 'List organizations; with showFeatured, each with its member count and a few members',
      tag,
      query: searchListQuery(organizationSearchColumns, {
        q: z.string().max(256).optional(),
        showFeatured: z.string().max(8).optional(),
      }),
      response: z.array(organizationListItemSchema),
    },
    async ({ query }, ctx) => {
      const { items, total } = await listOrganizations(db, { search: query.search, keyword: query.q }, pageOf(query));
      setTotal(ctx, total);
      // Logto reads the flag with `yes()`: true, 1, yes and y turn it on.
      if (!['true', '1', 'yes', 'y'].includes(query.showFeatured?.toLowerCase() ?? '')) {
        return items;
      }
      const featured = await featuredMembers(
        db,
        items.map(({ id }) => id),
      );
      return items.map((organization) => ({
        ...organization,
        ...(featured.get(organization.id) ?? { usersCount: 0, featuredUsers: [] }),
      }));
    },
  );

  api.add(
    {
      method: 'post',
      path: '/organizations',
      summary: 'Create an organization',
      tag,
      body: createOrganizationBody,
      response: organizationSchema,
      status: 201,
    },
    async ({ body }, _ctx, trx) => createOrganization(trx, body),
  );

  api.add(
    {
      method: 'get',
      path: '/organizations/:id',
      summary: 'Get an organization',
      tag,
      params: idParams,
      response: organizationSchema,
      errors: [404],
    },
    async ({ params }) => getOrganization(db, params.id),
  );

  api.add(
    {
      method: 'patch',
      path: '/organizations/:id',
      summary: 'Update an organization (customData is replaced)',
      tag,
      params: idParams,
      body: updateOrganizationBody,
      response: organizationSchema,
      errors: [404],
    },
    async ({ params, body }, _ctx, trx) => patchOrganization(trx, params.id, body),
  );

  api.add(
    {
      method: 'delete',
      path: '/organizations/:id',
      summary: 'Delete an organization with its memberships, JIT settings and invitations',
      tag,
      params: idParams,
      errors: [404],
    },
    async ({ params }, _ctx, trx, effects) => {
      await effects.emit('Organization.Deleted', { data: await removeOrganization(trx, params.id) });
    },
  );

  memberRoutes(api, db);
  applicationMemberRoutes(api, db);
  jitRoutes(api, db, cache);
  organizationScopeRoutes(api, db);
  organizationRoleRoutes(api, db);
  roleGrantRoutes(api, db);
  invitationRoutes(api, { db, messages });
}
