import { z } from 'zod';

import { listApplications } from '../applications/queries.ts';
import { applicationSchema } from '../applications/schemas.ts';
import { RequestError } from '../http/errors.ts';
import { pageOf, paginationQuery, setTotal } from '../http/pagination.ts';
import type { Api } from '../http/route.ts';
import type { ServiceContext } from '../http/context.ts';
import {
  addRolesToApplication,
  assertMachineToMachineRoles,
  getRole,
  getRoleHolderApplication,
  getRoleHolderApplicationForUpdate,
  getRoles,
} from './assignments.ts';
import { applicationIdsOfRole, listRoles, removeApplicationRoles, roleIdsOfApplication } from './queries.ts';
import { idList, roleSchema } from './schemas.ts';

const tag = 'Roles';
const roleParams = z.object({ id: z.string().min(1).max(21) });
const applicationParams = z.object({ applicationId: z.string().min(1).max(64) });

/** Role ↔ machine-to-machine application assignments, from either side. */
export function applicationRoleRoutes(api: Api, { db }: ServiceContext): void {
  api.add(
    {
      method: 'get',
      path: '/roles/:id/applications',
      summary: 'List the applications holding a role',
      tag,
      params: roleParams,
      query: paginationQuery.extend({ search: z.string().max(256).optional() }),
      response: z.array(applicationSchema),
      errors: [404],
    },
    async ({ params, query }, ctx) => {
      await getRole(db, params.id);
      const ids = await applicationIdsOfRole(db, params.id);
      const { items, total } = await listApplications(db, { ids, search: query.search }, pageOf(query));
      setTotal(ctx, total);
      return items;
    },
  );

  api.add(
    {
      method: 'post',
      path: '/roles/:id/applications',
      summary: 'Assign a role to applications',
      tag,
      params: roleParams,
      body: idList('applicationIds'),
      status: 201,
      errors: [404, 422],
    },
    async ({ params, body }, _ctx, trx) => {
      const role = await getRole(trx, params.id);
      assertMachineToMachineRoles([role]);
      const applicationIds = [...new Set(body.applicationIds)];
      for (const applicationId of applicationIds) {
        await getRoleHolderApplicationForUpdate(trx, applicationId);
        if ((await roleIdsOfApplication(trx, applicationId)).includes(role.id)) {
          throw new RequestError('role.application_exists', { applicationId });
        }
        await addRolesToApplication(trx, applicationId, [role.id]);
      }
    },
  );

  api.add(
    {
      method: 'delete',
      path: '/roles/:id/applications/:applicationId',
      summary: 'Remove a role from an application',
      tag,
      params: roleParams.extend(applicationParams.shape),
      errors: [404],
    },
    async ({ params }, _ctx, trx) => {
      await getRole(trx, params.id);
      if ((await removeApplicationRoles(trx, params.applicationId, [params.id])) === 0) {
        throw new RequestError('entity.not_exists_with_id', { entity: 'application', id: params.applicationId });
      }
    },
  );

  api.add(
    {
      method: 'get',
      path: '/applications/:applicationId/roles',
      summary: 'List the roles of an application',
      tag,
      params: applicationParams,
      query: paginationQuery.extend({ search: z.string().max(256).optional() }),
      response: z.array(roleSchema),
      errors: [404, 422],
    },
    async ({ params, query }, ctx) => {
      await getRoleHolderApplication(db, params.applicationId);
      const ids = await roleIdsOfApplication(db, params.applicationId);
      const { items, total } = await listRoles(db, { ids, search: query.search }, pageOf(query));
      setTotal(ctx, total);
      return items;
    },
  );

  api.add(
    {
      method: 'post',
      path: '/applications/:applicationId/roles',
      summary: 'Assign roles to an application (roles it holds already are ignored)',
      tag,
      params: applicationParams,
      body: idList('roleIds'),
      response: z.object({ roleIds: z.array(z.string()), addedRoleIds: z.array(z.string()) }),
      status: 201,
      errors: [404, 422],
    },
    async ({ params, body }, _ctx, trx) => {
      await getRoleHolderApplicationForUpdate(trx, params.applicationId);
      const roleIds = body.roleIds;
      assertMachineToMachineRoles(await getRoles(trx, roleIds));
      const addedRoleIds = await addRolesToApplication(trx, params.applicationId, roleIds);
      return { roleIds, addedRoleIds };
    },
  );

  api.add(
    {
      method: 'put',
      path: '/applications/:applicationId/roles',
      summary: 'Replace the roles of an application',
      tag,
      params: applicationParams,
      body: z.strictObject({ roleIds: z.array(z.string().min(1).max(21)).max(1000) }),
      status: 200,
      errors: [404, 422],
    },
    async ({ params, body }, _ctx, trx) => {
      await getRoleHolderApplicationForUpdate(trx, params.applicationId);
      assertMachineToMachineRoles(await getRoles(trx, body.roleIds));
      const held = await roleIdsOfApplication(trx, params.applicationId);
      await removeApplicationRoles(
        trx,
        params.applicationId,
        held.filter((id) => !body.roleIds.includes(id)),
      );
      await addRolesToApplication(trx, params.applicationId, body.roleIds);
    },
  );

  api.add(
    {
      method: 'delete',
      path: '/applications/:applicationId/roles/:roleId',
      summary: 'Remove a role from an application',
      tag,
      params: applicationParams.extend({ roleId: z.string().min(1).max(21) }),
      errors: [404, 422],
    },
    async ({ params }, _ctx, trx) => {
      await getRoleHolderApplicationForUpdate(trx, params.applicationId);
      if ((await removeApplicationRoles(trx, params.applicationId, [params.roleId])) === 0) {
        throw new RequestError('entity.not_exists_with_id', { entity: 'role', id: params.roleId });
      }
    },
  );
}
