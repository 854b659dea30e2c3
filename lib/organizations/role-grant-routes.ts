import type { Knex } from 'knex';
import { z } from 'zod';

import { pageOf, paginationQuery, setTotal } from '../http/pagination.ts';
import type { Api } from '../http/route.ts';
import { scopeSchema } from '../resources/schemas.ts';
import { linkedIds, organizationLinks } from './links.ts';
import { getOrganizationRole } from './lookups.ts';
import { addRoleGrants, removeRoleGrant, replaceRoleGrants } from './organization-roles.ts';
import { listOrganizationScopes, listRoleResourceScopes } from './role-queries.ts';
import { idArray, nonEmptyIdArray, organizationScopeSchema } from './schemas.ts';

const tag = 'Organization roles';
const idParams = z.object({ id: z.string().min(1).max(21) });

/** What an organization role grants: organization scopes, and scopes of API resources. */
export function roleGrantRoutes(api: Api, db: Knex): void {
  api.add(
    {
      method: 'get',
      path: '/organization-roles/:id/scopes',
      summary: 'List the organization scopes of an organization role',
      tag,
      params: idParams,
      query: paginationQuery,
      response: z.array(organizationScopeSchema),
      errors: [404],
    },
    async ({ params, query }, ctx) => {
      await getOrganizationRole(db, params.id);
      const ids = await linkedIds(db, organizationLinks.roleScopes(params.id));
      const { items, total } = await listOrganizationScopes(db, { ids }, pageOf(query));
      setTotal(ctx, total);
      return items;
    },
  );

  api.add(
    {
      method: 'post',
      path: '/organization-roles/:id/scopes',
      summary: 'Add organization scopes to an organization role (scopes it has already are ignored)',
      tag,
      params: idParams,
      body: z.strictObject({ organizationScopeIds: nonEmptyIdArray }),
      status: 201,
      errors: [404, 422],
    },
    async ({ params, body }, _ctx, trx) => {
      await addRoleGrants(trx, 'scopes', params.id, body.organizationScopeIds);
    },
  );

  api.add(
    {
      method: 'put',
      path: '/organization-roles/:id/scopes',
      summary: 'Replace the organization scopes of an organization role',
      tag,
      params: idParams,
      body: z.strictObject({ organizationScopeIds: idArray }),
      errors: [404, 422],
    },
    async ({ params, body }, _ctx, trx) => {
      await replaceRoleGrants(trx, 'scopes', params.id, body.organizationScopeIds);
    },
  );

  api.add(
    {
      method: 'delete',
      path: '/organization-roles/:id/scopes/:organizationScopeId',
      summary: 'Remove an organization scope from an organization role',
      tag,
      params: idParams.extend({ organizationScopeId: z.string().min(1).max(21) }),
      errors: [404],
    },
    async ({ params }, _ctx, trx) => {
      await removeRoleGrant(trx, 'scopes', params.id, params.organizationScopeId);
    },
  );

  api.add(
    {
      method: 'get',
      path: '/organization-roles/:id/resource-scopes',
      summary: 'List the API resource scopes of an organization role',
      tag,
      params: idParams,
      query: paginationQuery,
      response: z.array(scopeSchema),
      errors: [404],
    },
    async ({ params, query }, ctx) => {
      await getOrganizationRole(db, params.id);
      const { items, total } = await listRoleResourceScopes(db, params.id, pageOf(query));
      setTotal(ctx, total);
      return items;
    },
  );

  api.add(
    {
      method: 'post',
      path: '/organization-roles/:id/resource-scopes',
      summary: 'Add API resource scopes to an organization role (scopes it has already are ignored)',
      tag,
      params: idParams,
      body: z.strictObject({ scopeIds: nonEmptyIdArray }),
      status: 201,
      errors: [404, 422],
    },
    async ({ params, body }, _ctx, trx) => {
      await addRoleGrants(trx, 'resourceScopes', params.id, body.scopeIds);
    },
  );

  api.add(
    {
      method: 'put',
      path: '/organization-roles/:id/resource-scopes',
      summary: 'Replace the API resource scopes of an organization role',
      tag,
      params: idParams,
      body: z.strictObject({ scopeIds: idArray }),
      errors: [404, 422],
    },
    async ({ params, body }, _ctx, trx) => {
      await replaceRoleGrants(trx, 'resourceScopes', params.id, body.scopeIds);
    },
  );

  api.add(
    {
      method: 'delete',
      path: '/organization-roles/:id/resource-scopes/:scopeId',
      summary: 'Remove an API resource scope from an organization role',
      tag,
      params: idParams.extend({ scopeId: z.string().min(1).max(21) }),
      errors: [404],
    },
    async ({ params }, _ctx, trx) => {
      await removeRoleGrant(trx, 'resourceScopes', params.id, params.scopeId);
    },
  );
}
