import type { Knex } from 'knex';
import { z } from 'zod';

import { findApplication, listApplications } from '../applications/queries.ts';
import { applicationSchema } from '../applications/schemas.ts';
import { RequestError } from '../http/errors.ts';
import { pageOf, paginationQuery, setTotal } from '../http/pagination.ts';
import type { Api } from '../http/route.ts';
import { linkedIds, organizationLinks } from './links.ts';
import { getOrganization, requireMembers } from './lookups.ts';
import { memberIds, organizationIdsOfMember, rolesOfMembers } from './member-queries.ts';
import { addMemberRoles, addRolesToMembers, removeMemberRole, replaceMemberRoles } from './member-roles.ts';
import {
  addOrganizationApplications,
  removeOrganizationApplication,
  replaceOrganizationApplications,
} from './memberships.ts';
import { listOrganizations } from './queries.ts';
import { listOrganizationRoles } from './role-queries.ts';
import {
  idArray,
  nonEmptyIdArray,
  organizationRoleSchema,
  organizationSchema,
  roleReferenceSchema,
} from './schemas.ts';

const tag = 'Organization applications';
const idParams = z.object({ id: z.string().min(1).max(21) });
const memberParams = idParams.extend({ applicationId: z.string().min(1).max(64) });

/** Machine-to-machine applications as members of organizations, and the organization roles they hold. */
export function applicationMemberRoutes(api: Api, db: Knex): void {
  api.add(
    {
      method: 'get',
      path: '/organizations/:id/applications',
      summary: 'List the application members of an organization, each with its organization roles',
      tag,
      params: idParams,
      query: paginationQuery.extend({ q: z.string().max(256).optional() }),
      response: z.array(applicationSchema.extend({ organizationRoles: z.array(roleReferenceSchema) })),
      errors: [404],
    },
    async ({ params, query }, ctx) => {
      await getOrganization(db, params.id);
      const ids = await memberIds(db, 'application', params.id);
      const { items, total } = await listApplications(db, { ids, search: query.q }, pageOf(query));
      setTotal(ctx, total);
      const roles = await rolesOfMembers(
        db,
        'application',
        params.id,
        items.map(({ id }) => id),
      );
      return items.map((application) => ({ ...application, organizationRoles: roles.get(application.id) ?? [] }));
    },
  );

  api.add(
    {
      method: 'post',
      path: '/organizations/:id/applications',
      summary: 'Add machine-to-machine applications to an organization (members already are ignored)',
      tag,
      params: idParams,
      body: z.strictObject({ applicationIds: nonEmptyIdArray }),
      status: 201,
      errors: [404, 422],
    },
    async ({ params, body }, ctx, trx) => {
      ctx.state.membershipDelta = await addOrganizationApplications(trx, params.id, body.applicationIds);
    },
  );

  api.add(
    {
      method: 'put',
      path: '/organizations/:id/applications',
      summary: 'Replace the application members of an organization',
      tag,
      params: idParams,
      body: z.strictObject({ applicationIds: idArray }),
      errors: [404, 422],
    },
    async ({ params, body }, ctx, trx) => {
      ctx.state.membershipDelta = await replaceOrganizationApplications(trx, params.id, body.applicationIds);
    },
  );

  api.add(
    {
      method: 'delete',
      path: '/organizations/:id/applications/:applicationId',
      summary: 'Remove an application from an organization, with its organization roles',
      tag,
      params: memberParams,
      errors: [404],
    },
    async ({ params }, ctx, trx) => {
      ctx.state.membershipDelta = await removeOrganizationApplication(trx, params.id, params.applicationId);
    },
  );

  api.add(
    {
      method: 'post',
      path: '/organizations/:id/applications/roles',
      summary: 'Give organization roles to several application members at once',
      tag,
      params: idParams,
      body: z.strictObject({ applicationIds: nonEmptyIdArray.max(100), organizationRoleIds: nonEmptyIdArray.max(100) }),
      status: 201,
      errors: [404, 422],
    },
    async ({ params, body }, _ctx, trx) => {
      await addRolesToMembers(trx, 'application', params.id, body.applicationIds, body.organizationRoleIds);
    },
  );

  api.add(
    {
      method: 'get',
      path: '/organizations/:id/applications/:applicationId/roles',
      summary: 'List the organization roles of an application member',
      tag,
      params: memberParams,
      query: paginationQuery,
      response: z.array(organizationRoleSchema),
      errors: [404, 422],
    },
    async ({ params, query }, ctx) => {
      await getOrganization(db, params.id);
      await requireMembers(db, 'application', params.id, [params.applicationId]);
      const ids = await linkedIds(db, organizationLinks.applicationRoles(params.id, params.applicationId));
      const { items, total } = await listOrganizationRoles(db, { ids }, pageOf(query));
      setTotal(ctx, total);
      return items;
    },
  );

  api.add(
    {
      method: 'post',
      path: '/organizations/:id/applications/:applicationId/roles',
      summary: 'Give MachineToMachine organization roles to an application member (roles held already are ignored)',
      tag,
      params: memberParams,
      body: z.strictObject({ organizationRoleIds: nonEmptyIdArray }),
      status: 201,
      errors: [404, 422],
    },
    async ({ params, body }, _ctx, trx) => {
      await addMemberRoles(trx, 'application', params.id, params.applicationId, { ids: body.organizationRoleIds });
    },
  );

  api.add(
    {
      method: 'put',
      path: '/organizations/:id/applications/:applicationId/roles',
      summary: 'Replace the organization roles of an application member',
      tag,
      params: memberParams,
      body: z.strictObject({ organizationRoleIds: idArray }),
      errors: [404, 422],
    },
    async ({ params, body }, _ctx, trx) => {
      await replaceMemberRoles(trx, 'application', params.id, params.applicationId, { ids: body.organizationRoleIds });
    },
  );

  api.add(
    {
      method: 'delete',
      path: '/organizations/:id/applications/:applicationId/roles/:organizationRoleId',
      summary: 'Take an organization role from an application member',
      tag,
      params: memberParams.extend({ organizationRoleId: z.string().min(1).max(21) }),
      errors: [404, 422],
    },
    async ({ params }, _ctx, trx) => {
      await removeMemberRole(trx, 'application', params.id, params.applicationId, params.organizationRoleId);
    },
  );

  api.add(
    {
      method: 'get',
      path: '/applications/:id/organizations',
      summary: 'List the organizations an application belongs to, with its organization roles in each',
      tag,
      params: z.object({ id: z.string().min(1).max(64) }),
      query: paginationQuery,
      response: z.array(organizationSchema.extend({ organizationRoles: z.array(roleReferenceSchema) })),
      errors: [404],
    },
    async ({ params, query }, ctx) => {
      if (!(await findApplication(db, params.id))) {
        throw new RequestError('entity.not_exists_with_id', { entity: 'application', id: params.id });
      }
      const ids = await organizationIdsOfMember(db, 'application', params.id);
      const { items, total } = await listOrganizations(db, { ids }, pageOf(query));
      setTotal(ctx, total);
      return Promise.all(
        items.map(async (organization) => ({
          ...organization,
          organizationRoles:
            (await rolesOfMembers(db, 'application', organization.id, [params.id])).get(params.id) ?? [],
        })),
      );
    },
  );
}
