import type { Knex } from 'knex';
import { z } from 'zod';

import { pageOf, setTotal } from '../../http/api/pagination.ts';
import type { Api } from '../../http/api/route.ts';
import { searchListQuery } from '../../http/api/search.ts';
import { idParams } from '../../shared/entity-id.ts';
import { getOrganizationRole } from '../lookups.ts';
import {
  createOrganizationRoleBody,
  organizationRoleListItemSchema,
  organizationRoleSchema,
  updateOrganizationRoleBody,
} from '../schemas.ts';
import { createOrganizationRole, patchOrganizationRole, removeOrganizationRole } from './organization-roles.ts';
import {
  listOrganizationRoles,
  organizationRoleSearchColumns,
  resourceScopesOfRoles,
  scopesOfRoles,
} from './role-queries.ts';

const tag = 'Organization roles';

/** The roles of the organization template; what they grant is in role-grant-routes.ts. */
export function organizationRoleRoutes(api: Api, db: Knex): void {
  api.add(
    {
      method: 'get',
      path: '/organization-roles',
      summary: 'List organization roles, by name, each with its organization scopes and resource scopes',
      tag,
      query: searchListQuery(organizationRoleSearchColumns, { q: z.string().max(256).optional() }),
      response: z.array(organizationRoleListItemSchema),
    },
    async ({ query }, ctx) => {
      const { items, total } = await listOrganizationRoles(
        db,
        { search: query.search, keyword: query.q },
        pageOf(query),
      );
      setTotal(ctx, total);
      const ids = items.map(({ id }) => id);
      const [scopes, resourceScopes] = [await scopesOfRoles(db, ids), await resourceScopesOfRoles(db, ids)];
      return items.map((role) => ({
        ...role,
        scopes: scopes.get(role.id) ?? [],
        resourceScopes: resourceScopes.get(role.id) ?? [],
      }));
    },
  );

  api.add(
    {
      method: 'post',
      path: '/organization-roles',
      summary: 'Create an organization role, optionally with organization scopes and resource scopes',
      tag,
      body: createOrganizationRoleBody,
      response: organizationRoleSchema,
      status: 201,
      errors: [422],
    },
    async ({ body }, _ctx, trx) => createOrganizationRole(trx, body),
  );

  api.add(
    {
      method: 'get',
      path: '/organization-roles/:id',
      summary: 'Get an organization role',
      tag,
      params: idParams,
      response: organizationRoleSchema,
      errors: [404],
    },
    async ({ params }) => getOrganizationRole(db, params.id),
  );

  api.add(
    {
      method: 'patch',
      path: '/organization-roles/:id',
      summary: 'Update the name or description of an organization role',
      tag,
      params: idParams,
      body: updateOrganizationRoleBody,
      response: organizationRoleSchema,
      errors: [404, 422],
    },
    async ({ params, body }, _ctx, trx) => patchOrganizationRole(trx, params.id, body),
  );

  api.add(
    {
      method: 'delete',
      path: '/organization-roles/:id',
      summary: 'Delete an organization role; members, JIT settings and invitations lose it',
      tag,
      params: idParams,
      errors: [404],
    },
    async ({ params }, _ctx, trx, effects) => {
      await effects.emit('OrganizationRole.Deleted', { data: await removeOrganizationRole(trx, params.id) });
    },
  );
}
