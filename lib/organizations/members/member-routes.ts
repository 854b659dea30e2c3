import type { Knex } from 'knex';
import { z } from 'zod';

import { linkSetRoutes } from '../../http/api/link-set-routes.ts';
import { pageOf, paginationQuery } from '../../http/api/pagination.ts';
import type { Api } from '../../http/api/route.ts';
import { RequestError } from '../../http/errors.ts';
import { entityId, idParams, userParams } from '../../shared/entity-id.ts';
import { findUser } from '../../users/queries.ts';
import { userSchema } from '../../users/schemas.ts';
import { linkedIds, linkStore, organizationLinks } from '../links.ts';
import { getOrganization, organizationParent, requireMembers, requireUsers } from '../lookups.ts';
import { listOrganizations } from '../queries.ts';
import { listOrganizationRoles } from '../roles/role-queries.ts';
import {
  idArray,
  memberRolesBody,
  nonEmptyIdArray,
  type Organization,
  organizationRoleSchema,
  organizationSchema,
  organizationScopeSchema,
  roleReferenceSchema,
} from '../schemas.ts';
import { listMemberUsers, organizationIdsOfMember, rolesOfMembers, scopesOfMember } from './member-queries.ts';
import { addRolesToMembers, checkMemberRoles, memberOf, memberRoleStore } from './member-roles.ts';
import { membershipChanged } from './memberships.ts';

const tag = 'Organization members';
const memberParams = idParams.extend({ userId: entityId });

/** Users as members of organizations, and the organization roles they hold there. */
export function memberRoutes(api: Api, db: Knex): void {
  linkSetRoutes(api, db, {
    tag,
    path: '/organizations/:id/users',
    params: idParams,
    parent: organizationParent,
    child: {
      param: 'userId',
      id: entityId,
      check: async (trx, _organization, body) => {
        await requireUsers(trx, body.userIds);
        return body.userIds;
      },
      missing: (id) => new RequestError('entity.not_exists_with_id', { entity: 'organization member', id }),
    },
    store: linkStore(({ id }: Organization) => organizationLinks.users(id)),
    changed: membershipChanged('user'),
    list: {
      summary: 'List the user members of an organization, each with their organization roles',
      query: paginationQuery.extend({
        q: z.string().max(256).optional(),
        organizationRoleId: z.string().max(21).optional(),
      }),
      response: z.array(userSchema.extend({ organizationRoles: z.array(roleReferenceSchema) })),
      errors: [404],
      async page(db, organization, query) {
        const { items, total } = await listMemberUsers(
          db,
          organization.id,
          { search: query.q, organizationRoleId: query.organizationRoleId },
          pageOf(query),
        );
        const roles = await rolesOfMembers(
          db,
          'user',
          organization.id,
          items.map(({ id }) => id),
        );
        return { items: items.map((user) => ({ ...user, organizationRoles: roles.get(user.id) ?? [] })), total };
      },
    },
    add: {
      summary: 'Add users to an organization (members already are ignored)',
      body: z.strictObject({ userIds: nonEmptyIdArray }),
      response: z.object({ userIds: z.array(z.string()) }),
      answer: (body) => ({ userIds: body.userIds }),
      status: 201,
      errors: [404, 422],
    },
    replace: {
      summary: 'Replace the user members of an organization',
      body: z.strictObject({ userIds: idArray }),
      errors: [404, 422],
    },
    remove: { summary: 'Remove a user from an organization, with their organization roles', errors: [404] },
  });

  api.add(
    {
      method: 'post',
      path: '/organizations/:id/users/roles',
      summary: 'Give organization roles to several members at once',
      tag,
      params: idParams,
      body: z.strictObject({ userIds: nonEmptyIdArray.max(100), organizationRoleIds: nonEmptyIdArray.max(100) }),
      status: 201,
      errors: [404, 422],
    },
    async ({ params, body }, _ctx, trx) => {
      await addRolesToMembers(trx, 'user', params.id, body.userIds, body.organizationRoleIds);
    },
  );

  linkSetRoutes(api, db, {
    tag,
    path: '/organizations/:id/users/:userId/roles',
    params: memberParams,
    parent: memberOf('user', (params: z.output<typeof memberParams>) => params.userId),
    child: {
      param: 'organizationRoleId',
      id: entityId,
      check: (trx, _member, body) => checkMemberRoles(trx, 'user', body),
      missing: (id) => new RequestError('entity.not_exists_with_id', { entity: 'organization role', id }),
    },
    store: memberRoleStore('user'),
    list: {
      summary: 'List the organization roles of a member',
      query: paginationQuery,
      response: z.array(organizationRoleSchema),
      errors: [404, 422],
      async page(db, member, query) {
        const ids = await linkedIds(db, organizationLinks.userRoles(member.organizationId, member.memberId));
        return listOrganizationRoles(db, { ids }, pageOf(query));
      },
    },
    add: {
      summary: 'Give organization roles to a member, by id or name (roles held already are ignored)',
      body: memberRolesBody,
      response: z.object({ organizationRoleIds: z.array(z.string()) }),
      answer: (_body, roleIds) => ({ organizationRoleIds: roleIds }),
      status: 201,
      errors: [404, 422],
    },
    replace: {
      summary: 'Replace the organization roles of a member, by id or name',
      body: memberRolesBody,
      errors: [404, 422],
    },
    remove: { summary: 'Take an organization role from a member', errors: [404, 422] },
  });

  api.add(
    {
      method: 'get',
      path: '/organizations/:id/users/:userId/scopes',
      summary: 'List the organization scopes a member holds through their organization roles',
      tag,
      params: memberParams,
      response: z.array(organizationScopeSchema),
      errors: [404, 422],
    },
    async ({ params }) => {
      await getOrganization(db, params.id);
      await requireMembers(db, 'user', params.id, [params.userId]);
      return scopesOfMember(db, params.id, params.userId);
    },
  );

  api.add(
    {
      method: 'get',
      path: '/users/:userId/organizations',
      summary: 'List the organizations a user belongs to, with their organization roles in each',
      tag,
      params: userParams,
      response: z.array(organizationSchema.extend({ organizationRoles: z.array(roleReferenceSchema) })),
      errors: [404],
    },
    async ({ params }) => {
      if (!(await findUser(db, params.userId))) {
        throw new RequestError('entity.not_exists_with_id', { entity: 'user', id: params.userId });
      }
      const ids = await organizationIdsOfMember(db, 'user', params.userId);
      const { items } = await listOrganizations(db, { ids }, { offset: 0 });
      return Promise.all(
        items.map(async (organization) => ({
          ...organization,
          organizationRoles:
            (await rolesOfMembers(db, 'user', organization.id, [params.userId])).get(params.userId) ?? [],
        })),
      );
    },
  );
}
