import type { Knex } from 'knex';
import { z } from 'zod';

import { RequestError } from '../http/errors.ts';
import { pageOf, paginationQuery, setTotal } from '../http/pagination.ts';
import type { Api } from '../http/route.ts';
import { findUser } from '../users/queries.ts';
import { userSchema } from '../users/schemas.ts';
import { linkedIds, organizationLinks } from './links.ts';
import { getOrganization, requireMembers } from './lookups.ts';
import { listMemberUsers, organizationIdsOfMember, rolesOfMembers, scopesOfMember } from './member-queries.ts';
import { addMemberRoles, addRolesToMembers, removeMemberRole, replaceMemberRoles } from './member-roles.ts';
import { addOrganizationUsers, removeOrganizationUser, replaceOrganizationUsers } from './memberships.ts';
import { listOrganizations } from './queries.ts';
import { listOrganizationRoles } from './role-queries.ts';
import {
  idArray,
  memberRolesBody,
  nonEmptyIdArray,
  organizationRoleSchema,
  organizationSchema,
  organizationScopeSchema,
  roleReferenceSchema,
} from './schemas.ts';

const tag = 'Organization members';
const idParams = z.object({ id: z.string().min(1).max(21) });
const memberParams = idParams.extend({ userId: z.string().min(1).max(21) });

/** Users as members of organizations, and the organization roles they hold there. */
export function memberRoutes(api: Api, db: Knex): void {
  api.add(
    {
      method: 'get',
      path: '/organizations/:id/users',
      summary: 'List the user members of an organization, each with their organization roles',
      tag,
      params: idParams,
      query: paginationQuery.extend({
        q: z.string().max(256).optional(),
        organizationRoleId: z.string().max(21).optional(),
      }),
      response: z.array(userSchema.extend({ organizationRoles: z.array(roleReferenceSchema) })),
      errors: [404],
    },
    async ({ params, query }, ctx) => {
      await getOrganization(db, params.id);
      const { items, total } = await listMemberUsers(
        db,
        params.id,
        { search: query.q, organizationRoleId: query.organizationRoleId },
        pageOf(query),
      );
      setTotal(ctx, total);
      const roles = await rolesOfMembers(
        db,
        'user',
        params.id,
        items.map(({ id }) => id),
      );
      return items.map((user) => ({ ...user, organizationRoles: roles.get(user.id) ?? [] }));
    },
  );

  api.add(
    {
      method: 'post',
      path: '/organizations/:id/users',
      summary: 'Add users to an organization (members already are ignored)',
      tag,
      params: idParams,
      body: z.strictObject({ userIds: nonEmptyIdArray }),
      response: z.object({ userIds: z.array(z.string()) }),
      status: 201,
      errors: [404, 422],
    },
    async ({ params, body }, ctx, trx) => {
      ctx.state.membershipDelta = await addOrganizationUsers(trx, params.id, body.userIds);
      return { userIds: body.userIds };
    },
  );

  api.add(
    {
      method: 'put',
      path: '/organizations/:id/users',
      summary: 'Replace the user members of an organization',
      tag,
      params: idParams,
      body: z.strictObject({ userIds: idArray }),
      errors: [404, 422],
    },
    async ({ params, body }, ctx, trx) => {
      ctx.state.membershipDelta = await replaceOrganizationUsers(trx, params.id, body.userIds);
    },
  );

  api.add(
    {
      method: 'delete',
      path: '/organizations/:id/users/:userId',
      summary: 'Remove a user from an organization, with their organization roles',
      tag,
      params: memberParams,
      errors: [404],
    },
    async ({ params }, ctx, trx) => {
      ctx.state.membershipDelta = await removeOrganizationUser(trx, params.id, params.userId);
    },
  );

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

  api.add(
    {
      method: 'get',
      path: '/organizations/:id/users/:userId/roles',
      summary: 'List the organization roles of a member',
      tag,
      params: memberParams,
      query: paginationQuery,
      response: z.array(organizationRoleSchema),
      errors: [404, 422],
    },
    async ({ params, query }, ctx) => {
      await getOrganization(db, params.id);
      await requireMembers(db, 'user', params.id, [params.userId]);
      const ids = await linkedIds(db, organizationLinks.userRoles(params.id, params.userId));
      const { items, total } = await listOrganizationRoles(db, { ids }, pageOf(query));
      setTotal(ctx, total);
      return items;
    },
  );

  api.add(
    {
      method: 'post',
      path: '/organizations/:id/users/:userId/roles',
      summary: 'Give organization roles to a member, by id or name (roles held already are ignored)',
      tag,
      params: memberParams,
      body: memberRolesBody,
      response: z.object({ organizationRoleIds: z.array(z.string()) }),
      status: 201,
      errors: [404, 422],
    },
    async ({ params, body }, _ctx, trx) => {
      const roles = { ids: body.organizationRoleIds, names: body.organizationRoleNames };
      const { roleIds } = await addMemberRoles(trx, 'user', params.id, params.userId, roles);
      return { organizationRoleIds: roleIds };
    },
  );

  api.add(
    {
      method: 'put',
      path: '/organizations/:id/users/:userId/roles',
      summary: 'Replace the organization roles of a member, by id or name',
      tag,
      params: memberParams,
      body: memberRolesBody,
      errors: [404, 422],
    },
    async ({ params, body }, _ctx, trx) => {
      const roles = { ids: body.organizationRoleIds, names: body.organizationRoleNames };
      await replaceMemberRoles(trx, 'user', params.id, params.userId, roles);
    },
  );

  api.add(
    {
      method: 'delete',
      path: '/organizations/:id/users/:userId/roles/:organizationRoleId',
      summary: 'Take an organization role from a member',
      tag,
      params: memberParams.extend({ organizationRoleId: z.string().min(1).max(21) }),
      errors: [404, 422],
    },
    async ({ params }, _ctx, trx) => {
      await removeMemberRole(trx, 'user', params.id, params.userId, params.organizationRoleId);
    },
  );

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
      params: z.object({ userId: z.string().min(1).max(21) }),
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
