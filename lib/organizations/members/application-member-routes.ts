import type { Knex } from 'knex';
import { z } from 'zod';

import { findApplication, listApplications } from '../../applications/queries.ts';
import { applicationSchema } from '../../applications/schemas.ts';
import { linkSetRoutes } from '../../http/api/link-set-routes.ts';
import { pageOf, paginationQuery, setTotal } from '../../http/api/pagination.ts';
import type { Api } from '../../http/api/route.ts';
import { RequestError } from '../../http/errors.ts';
import { entityId, idParams } from '../../shared/entity-id.ts';
import { linkedIds, linkStore, organizationLinks } from '../links.ts';
import { organizationParent, requireMachineApplications } from '../lookups.ts';
import { listOrganizations } from '../queries.ts';
import { listOrganizationRoles } from '../roles/role-queries.ts';
import {
  idArray,
  nonEmptyIdArray,
  type Organization,
  organizationRoleSchema,
  organizationSchema,
  roleReferenceSchema,
} from '../schemas.ts';
import { memberIds, organizationIdsOfMember, rolesOfMembers } from './member-queries.ts';
import { addRolesToMembers, checkMemberRoles, memberOf, memberRoleStore } from './member-roles.ts';
import { membershipChanged } from './memberships.ts';

const tag = 'Organization applications';
const memberParams = idParams.extend({ applicationId: z.string().min(1).max(64) });

/** Machine-to-machine applications as members of organizations, and the organization roles they hold. */
export function applicationMemberRoutes(api: Api, db: Knex): void {
  linkSetRoutes(api, db, {
    tag,
    path: '/organizations/:id/applications',
    params: idParams,
    parent: organizationParent,
    child: {
      param: 'applicationId',
      id: z.string().min(1).max(64),
      check: async (trx, _organization, body) => {
        await requireMachineApplications(trx, body.applicationIds);
        return body.applicationIds;
      },
      missing: (id) => new RequestError('entity.not_exists_with_id', { entity: 'organization application', id }),
    },
    store: linkStore(({ id }: Organization) => organizationLinks.applications(id)),
    changed: membershipChanged('application'),
    list: {
      summary: 'List the application members of an organization, each with its organization roles',
      query: paginationQuery.extend({ q: z.string().max(256).optional() }),
      response: z.array(applicationSchema.extend({ organizationRoles: z.array(roleReferenceSchema) })),
      errors: [404],
      async page(db, organization, query) {
        const ids = await memberIds(db, 'application', organization.id);
        const { items, total } = await listApplications(db, { ids, keyword: query.q }, pageOf(query));
        const roles = await rolesOfMembers(
          db,
          'application',
          organization.id,
          items.map(({ id }) => id),
        );
        return {
          items: items.map((application) => ({ ...application, organizationRoles: roles.get(application.id) ?? [] })),
          total,
        };
      },
    },
    add: {
      summary: 'Add machine-to-machine applications to an organization (members already are ignored)',
      body: z.strictObject({ applicationIds: nonEmptyIdArray }),
      status: 201,
      errors: [404, 422],
    },
    replace: {
      summary: 'Replace the application members of an organization',
      body: z.strictObject({ applicationIds: idArray }),
      errors: [404, 422],
    },
    remove: { summary: 'Remove an application from an organization, with its organization roles', errors: [404] },
  });

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

  linkSetRoutes(api, db, {
    tag,
    path: '/organizations/:id/applications/:applicationId/roles',
    params: memberParams,
    parent: memberOf('application', (params: z.output<typeof memberParams>) => params.applicationId),
    child: {
      param: 'organizationRoleId',
      id: entityId,
      check: (trx, _member, body) => checkMemberRoles(trx, 'application', body),
      missing: (id) => new RequestError('entity.not_exists_with_id', { entity: 'organization role', id }),
    },
    store: memberRoleStore('application'),
    list: {
      summary: 'List the organization roles of an application member',
      query: paginationQuery,
      response: z.array(organizationRoleSchema),
      errors: [404, 422],
      async page(db, member, query) {
        const ids = await linkedIds(db, organizationLinks.applicationRoles(member.organizationId, member.memberId));
        return listOrganizationRoles(db, { ids }, pageOf(query));
      },
    },
    add: {
      summary: 'Give MachineToMachine organization roles to an application member (roles held already are ignored)',
      body: z.strictObject({ organizationRoleIds: nonEmptyIdArray }),
      status: 201,
      errors: [404, 422],
    },
    replace: {
      summary: 'Replace the organization roles of an application member',
      body: z.strictObject({ organizationRoleIds: idArray }),
      errors: [404, 422],
    },
    remove: { summary: 'Take an organization role from an application member', errors: [404, 422] },
  });

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
