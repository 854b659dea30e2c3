import type { Knex } from 'knex';
import { z } from 'zod';

import { pageOf, setTotal } from '../../http/api/pagination.ts';
import type { Api } from '../../http/api/route.ts';
import { searchListQuery } from '../../http/api/search.ts';
import { idParams } from '../../shared/entity-id.ts';
import { getOrganizationScope } from '../lookups.ts';
import { listOrganizationScopes, organizationScopeSearchColumns } from '../roles/role-queries.ts';
import { createOrganizationScopeBody, organizationScopeSchema, updateOrganizationScopeBody } from '../schemas.ts';
import { createOrganizationScope, patchOrganizationScope, removeOrganizationScope } from './organization-scopes.ts';

const tag = 'Organization scopes';

/** The scopes of the organization template, which organization roles grant. */
export function organizationScopeRoutes(api: Api, db: Knex): void {
  api.add(
    {
      method: 'get',
      path: '/organization-scopes',
      summary: 'List organization scopes, by name',
      tag,
      query: searchListQuery(organizationScopeSearchColumns, { q: z.string().max(256).optional() }),
      response: z.array(organizationScopeSchema),
    },
    async ({ query }, ctx) => {
      const { items, total } = await listOrganizationScopes(
        db,
        { search: query.search, keyword: query.q },
        pageOf(query),
      );
      setTotal(ctx, total);
      return items;
    },
  );

  api.add(
    {
      method: 'post',
      path: '/organization-scopes',
      summary: 'Create an organization scope',
      tag,
      body: createOrganizationScopeBody,
      response: organizationScopeSchema,
      status: 201,
      errors: [422],
    },
    async ({ body }, _ctx, trx) => createOrganizationScope(trx, body),
  );

  api.add(
    {
      method: 'get',
      path: '/organization-scopes/:id',
      summary: 'Get an organization scope',
      tag,
      params: idParams,
      response: organizationScopeSchema,
      errors: [404],
    },
    async ({ params }) => getOrganizationScope(db, params.id),
  );

  api.add(
    {
      method: 'patch',
      path: '/organization-scopes/:id',
      summary: 'Update an organization scope',
      tag,
      params: idParams,
      body: updateOrganizationScopeBody,
      response: organizationScopeSchema,
      errors: [404, 422],
    },
    async ({ params, body }, _ctx, trx) => patchOrganizationScope(trx, params.id, body),
  );

  api.add(
    {
      method: 'delete',
      path: '/organization-scopes/:id',
      summary: 'Delete an organization scope; roles lose it',
      tag,
      params: idParams,
      errors: [404],
    },
    async ({ params }, _ctx, trx, effects) => {
      await effects.emit('OrganizationScope.Deleted', { data: await removeOrganizationScope(trx, params.id) });
    },
  );
}
