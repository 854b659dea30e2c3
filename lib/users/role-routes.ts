import { z } from 'zod';

import { RequestError } from '../http/errors.ts';
import { pageOf, paginationQuery, setTotal } from '../http/pagination.ts';
import type { Api } from '../http/route.ts';
import type { ServiceContext } from '../http/context.ts';
import { listUsers } from './queries.ts';
import { userSchema } from './schemas.ts';
import { getUserRow, getUserRowForUpdate } from './users.ts';
import { addRolesToUser, assertUserRoles, getRole, getRoles } from '../roles/assignments.ts';
import { listRoles, removeUserRoles, roleIdsOfUser, userIdsOfRole } from '../roles/queries.ts';
import { idList, roleSchema } from '../roles/schemas.ts';

const tag = 'Roles';
const roleParams = z.object({ id: z.string().min(1).max(21) });
const userParams = z.object({ userId: z.string().min(1).max(21) });
const search = paginationQuery.extend({ search: z.string().max(256).optional() });

/** Role ↔ user assignments, from either side. */
export function userRoleRoutes(api: Api, { db }: ServiceContext): void {
  api.add(
    {
      method: 'get',
      path: '/roles/:id/users',
      summary: 'List the users holding a role',
      tag,
      params: roleParams,
      query: search,
      response: z.array(userSchema),
      errors: [404],
    },
    async ({ params, query }, ctx) => {
      await getRole(db, params.id);
      const { items, total } = await listUsers(
        db,
        { ids: await userIdsOfRole(db, params.id), search: query.search },
        pageOf(query),
      );
      setTotal(ctx, total);
      return items;
    },
  );

  api.add(
    {
      method: 'post',
      path: '/roles/:id/users',
      summary: 'Assign a role to users',
      tag,
      params: roleParams,
      body: idList('userIds'),
      status: 201,
      errors: [404, 422],
    },
    async ({ params, body }, _ctx, trx) => {
      const role = await getRole(trx, params.id);
      assertUserRoles([role]);
      for (const userId of new Set(body.userIds)) {
        await getUserRowForUpdate(trx, userId);
        if ((await addRolesToUser(trx, userId, [role.id])).length === 0) {
          throw new RequestError('role.user_exists', { userId });
        }
      }
    },
  );

  api.add(
    {
      method: 'delete',
      path: '/roles/:id/users/:userId',
      summary: 'Remove a role from a user',
      tag,
      params: roleParams.extend(userParams.shape),
      errors: [404],
    },
    async ({ params }, _ctx, trx) => {
      await getRole(trx, params.id);
      if ((await removeUserRoles(trx, params.userId, [params.id])) === 0) {
        throw new RequestError('entity.not_exists_with_id', { entity: 'user', id: params.userId });
      }
    },
  );

  api.add(
    {
      method: 'get',
      path: '/users/:userId/roles',
      summary: 'List the roles of a user',
      tag,
      params: userParams,
      query: search,
      response: z.array(roleSchema),
      errors: [404],
    },
    async ({ params, query }, ctx) => {
      await getUserRow(db, params.userId);
      const { items, total } = await listRoles(
        db,
        { ids: await roleIdsOfUser(db, params.userId), search: query.search },
        pageOf(query),
      );
      setTotal(ctx, total);
      return items;
    },
  );

  api.add(
    {
      method: 'post',
      path: '/users/:userId/roles',
      summary: 'Assign roles to a user (roles already held are ignored)',
      tag,
      params: userParams,
      body: idList('roleIds'),
      response: z.object({ roleIds: z.array(z.string()), addedRoleIds: z.array(z.string()) }),
      status: 201,
      errors: [404, 422],
    },
    async ({ params, body }, _ctx, trx) => {
      await getUserRowForUpdate(trx, params.userId);
      const roleIds = body.roleIds;
      assertUserRoles(await getRoles(trx, roleIds));
      return { roleIds, addedRoleIds: await addRolesToUser(trx, params.userId, roleIds) };
    },
  );

  api.add(
    {
      method: 'put',
      path: '/users/:userId/roles',
      summary: 'Replace the roles of a user',
      tag,
      params: userParams,
      body: z.strictObject({ roleIds: z.array(z.string().min(1).max(21)).max(1000) }),
      response: z.object({ roleIds: z.array(z.string()) }),
      errors: [404, 422],
    },
    async ({ params, body }, _ctx, trx) => {
      await getUserRowForUpdate(trx, params.userId);
      assertUserRoles(await getRoles(trx, body.roleIds));
      const held = await roleIdsOfUser(trx, params.userId);
      await removeUserRoles(
        trx,
        params.userId,
        held.filter((id) => !body.roleIds.includes(id)),
      );
      await addRolesToUser(trx, params.userId, body.roleIds);
      return { roleIds: [...new Set(body.roleIds)] };
    },
  );

  api.add(
    {
      method: 'delete',
      path: '/users/:userId/roles/:roleId',
      summary: 'Remove a role from a user',
      tag,
      params: userParams.extend({ roleId: z.string().min(1).max(21) }),
      errors: [404],
    },
    async ({ params }, _ctx, trx) => {
      await getUserRowForUpdate(trx, params.userId);
      if ((await removeUserRoles(trx, params.userId, [params.roleId])) === 0) {
        throw new RequestError('entity.not_exists_with_id', { entity: 'role', id: params.roleId });
      }
    },
  );
}
