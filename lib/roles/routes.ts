import { z } from 'zod';

import { pageOf, setTotal } from '../http/api/pagination.ts';
import type { Api } from '../http/api/route.ts';
import { searchListQuery } from '../http/api/search.ts';
import type { ServiceContext } from '../http/context.ts';
import { RequestError } from '../http/errors.ts';
import { scopeSearchColumns } from '../resources/queries.ts';
import { scopeSchema } from '../resources/schemas.ts';
import { consoleApp } from '../shared/console-ids.ts';
import { entityId, idParams } from '../shared/entity-id.ts';
import { managementApi } from '../shared/management-api.ts';
import { tenantId } from '../shared/tenant.ts';
import { generateId } from '../storage/ids.ts';
import { getRole, getRoleForUpdate, linkScopesToRole } from './assignments.ts';
import {
  deleteRole,
  findRoleByName,
  holdersOfRoles,
  insertRole,
  listRoles,
  listRoleScopes,
  removeRoleScope,
  roleSearchColumns,
  updateRole,
} from './queries.ts';
import {
  createRoleBody,
  idList,
  roleListItemSchema,
  roleSchema,
  roleScopeSchema,
  roleTypes,
  updateRoleBody,
} from './schemas.ts';

const tag = 'Roles';

/**
 * The roles that give the management API to admin applications and to console administrators are
 * the service's own: holders may be added and removed, the roles not changed or deleted.
 */
function assertNotInternal(id: string): void {
  if (id === managementApi.roleId || id === consoleApp.roleId) {
    throw new RequestError('role.internal_role_violation', { id });
  }
}

export function roleRoutes(api: Api, { db }: ServiceContext): void {
  api.add(
    {
      method: 'get',
      path: '/roles',
      summary: 'List roles',
      tag,
      query: searchListQuery(roleSearchColumns, {
        type: z.enum(roleTypes).optional(),
        excludeApplicationId: z.string().max(64).optional(),
        excludeUserId: z.string().max(21).optional(),
      }),
      response: z.array(roleListItemSchema),
    },
    async ({ query }, ctx) => {
      const { items, total } = await listRoles(db, query, pageOf(query));
      setTotal(ctx, total);
      const ids = items.map(({ id }) => id);
      const [applications, users] = await Promise.all([
        holdersOfRoles(db, 'applications', ids),
        holdersOfRoles(db, 'users', ids),
      ]);
      return items.map((role) => {
        const applicationHolders = applications.get(role.id) ?? [];
        const userHolders = users.get(role.id) ?? [];
        return {
          ...role,
          usersCount: userHolders.length,
          featuredUsers: userHolders.slice(0, 3),
          applicationsCount: applicationHolders.length,
          featuredApplications: applicationHolders.slice(0, 3),
        };
      });
    },
  );

  api.add(
    {
      method: 'post',
      path: '/roles',
      summary: 'Create a role, optionally with scopes',
      tag,
      body: createRoleBody,
      response: roleSchema,
      errors: [404, 422],
    },
    async ({ body }, _ctx, trx) => {
      if (await findRoleByName(trx, body.name)) {
        throw new RequestError('role.name_in_use', { name: body.name });
      }
      const role = {
        tenantId,
        id: generateId(),
        name: body.name,
        description: body.description,
        type: body.type ?? 'User',
        isDefault: body.isDefault ?? false,
      };
      await insertRole(trx, role);
      if (body.scopeIds?.length) {
        await linkScopesToRole(trx, role, body.scopeIds);
      }
      return role;
    },
  );

  api.add(
    {
      method: 'get',
      path: '/roles/:id',
      summary: 'Get a role',
      tag,
      params: idParams,
      response: roleSchema,
      errors: [404],
    },
    async ({ params }) => getRole(db, params.id),
  );

  api.add(
    {
      method: 'patch',
      path: '/roles/:id',
      summary: 'Update a role',
      tag,
      params: idParams,
      body: updateRoleBody,
      response: roleSchema,
      errors: [404, 422],
    },
    async ({ params, body }, _ctx, trx) => {
      const role = await getRoleForUpdate(trx, params.id);
      assertNotInternal(role.id);
      if (body.name !== undefined && body.name !== role.name && (await findRoleByName(trx, body.name))) {
        throw new RequestError('role.name_in_use', { name: body.name });
      }
      const next = { ...role, ...body };
      await updateRole(trx, next);
      return next;
    },
  );

  api.add(
    { method: 'delete', path: '/roles/:id', summary: 'Delete a role', tag, params: idParams, errors: [404] },
    async ({ params }, _ctx, trx, effects) => {
      assertNotInternal(params.id);
      await effects.emit('Role.Deleted', { data: await getRole(trx, params.id) });
      await deleteRole(trx, params.id);
    },
  );

  api.add(
    {
      method: 'get',
      path: '/roles/:id/scopes',
      summary: 'List the scopes of a role',
      tag,
      params: idParams,
      query: searchListQuery(scopeSearchColumns, {}),
      response: z.array(roleScopeSchema),
      errors: [404],
    },
    async ({ params, query }, ctx) => {
      await getRole(db, params.id);
      const { items, total } = await listRoleScopes(db, params.id, query.search, pageOf(query));
      setTotal(ctx, total);
      return items;
    },
  );

  api.add(
    {
      method: 'post',
      path: '/roles/:id/scopes',
      summary: 'Link scopes to a role',
      tag,
      params: idParams,
      body: idList('scopeIds'),
      response: z.array(scopeSchema),
      status: 201,
      errors: [404, 422],
    },
    async ({ params, body }, _ctx, trx) => {
      const role = await getRoleForUpdate(trx, params.id);
      assertNotInternal(role.id);
      return linkScopesToRole(trx, role, body.scopeIds);
    },
  );

  api.add(
    {
      method: 'delete',
      path: '/roles/:id/scopes/:scopeId',
      summary: 'Unlink a scope from a role',
      tag,
      params: idParams.extend({ scopeId: entityId }),
      errors: [404],
    },
    async ({ params }, _ctx, trx) => {
      await getRole(trx, params.id);
      assertNotInternal(params.id);
      if (!(await removeRoleScope(trx, params.id, params.scopeId))) {
        throw new RequestError('entity.not_exists_with_id', { entity: 'scope', id: params.scopeId });
      }
    },
  );
}
