import { z } from 'zod';

import { linkSetRoutes } from '../http/api/link-set-routes.ts';
import { pageOf } from '../http/api/pagination.ts';
import type { Api } from '../http/api/route.ts';
import { searchListQuery } from '../http/api/search.ts';
import type { ServiceContext } from '../http/context.ts';
import { RequestError } from '../http/errors.ts';
import { addRolesToUser, assertUserRoles } from '../roles/assignments.ts';
import { assignRoles, heldRoles, roleOfHolders } from '../roles/held-roles.ts';
import { listRoles, removeUserRoles, roleIdsOfUser, roleSearchColumns, userIdsOfRole } from '../roles/queries.ts';
import { idList, roleSchema } from '../roles/schemas.ts';
import { entityId, idParams, userParams } from '../shared/entity-id.ts';
import { listUsers, userSearchColumns } from './queries.ts';
import { userSchema } from './schemas.ts';
import { getUserRow, getUserRowForUpdate } from './users.ts';

const tag = 'Roles';

/** Role ↔ user assignments, from either side. */
export function userRoleRoutes(api: Api, { db }: ServiceContext): void {
  linkSetRoutes(api, db, {
    tag,
    path: '/roles/:id/users',
    params: idParams,
    parent: roleOfHolders,
    child: {
      param: 'userId',
      id: entityId,
      check: (_trx, role, body) => {
        assertUserRoles([role]);
        return body.userIds;
      },
      missing: (id) => new RequestError('entity.not_exists_with_id', { entity: 'user', id }),
    },
    store: {
      ids: (db, role) => userIdsOfRole(db, role.id),
      // Unlike a user's roles, a user holding the role already is an error (Logto's answer).
      async add(trx, role, userIds) {
        const unique = [...new Set(userIds)];
        for (const userId of unique) {
          await getUserRowForUpdate(trx, userId);
          if ((await addRolesToUser(trx, userId, [role.id])).length === 0) {
            throw new RequestError('role.user_exists', { userId });
          }
        }
        return unique;
      },
      async remove(trx, role, userIds) {
        let removed = 0;
        for (const userId of userIds) {
          removed += await removeUserRoles(trx, userId, [role.id]);
        }
        return removed;
      },
    },
    list: {
      summary: 'List the users holding a role',
      query: searchListQuery(userSearchColumns, {}),
      response: z.array(userSchema),
      errors: [404],
      page: async (db, role, query) =>
        listUsers(db, { ids: await userIdsOfRole(db, role.id), search: query.search }, pageOf(query)),
    },
    add: { summary: 'Assign a role to users', body: idList('userIds'), status: 201, errors: [404, 422] },
    remove: { summary: 'Remove a role from a user', errors: [404] },
  });

  linkSetRoutes(api, db, {
    tag,
    path: '/users/:userId/roles',
    params: userParams,
    parent: {
      find: (db, params) => getUserRow(db, params.userId),
      lock: (trx, params) => getUserRowForUpdate(trx, params.userId),
    },
    child: heldRoles(assertUserRoles),
    store: {
      ids: (db, user) => roleIdsOfUser(db, user.id),
      add: (trx, user, roleIds) => addRolesToUser(trx, user.id, roleIds),
      remove: (trx, user, roleIds) => removeUserRoles(trx, user.id, roleIds),
    },
    list: {
      summary: 'List the roles of a user',
      query: searchListQuery(roleSearchColumns, {}),
      response: z.array(roleSchema),
      errors: [404],
      page: async (db, user, query) =>
        listRoles(db, { ids: await roleIdsOfUser(db, user.id), search: query.search }, pageOf(query)),
    },
    add: assignRoles('Assign roles to a user (roles already held are ignored)'),
    replace: {
      summary: 'Replace the roles of a user',
      body: z.strictObject({ roleIds: z.array(entityId).max(1000) }),
      response: z.object({ roleIds: z.array(z.string()) }),
      answer: (body) => ({ roleIds: [...new Set(body.roleIds)] }),
      errors: [404, 422],
    },
    remove: { summary: 'Remove a role from a user', errors: [404] },
  });
}
