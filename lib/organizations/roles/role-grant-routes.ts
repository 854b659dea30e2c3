import type { Knex } from 'knex';
import { z } from 'zod';

import { linkSetRoutes } from '../../http/api/link-set-routes.ts';
import { pageOf, paginationQuery } from '../../http/api/pagination.ts';
import type { Api } from '../../http/api/route.ts';
import { RequestError } from '../../http/errors.ts';
import { scopeSchema } from '../../resources/schemas.ts';
import { entityId, idParams } from '../../shared/entity-id.ts';
import { linkedIds, linkStore, organizationLinks } from '../links.ts';
import { organizationRoleParent, requireOrganizationScopes, requireResourceScopes } from '../lookups.ts';
import { idArray, nonEmptyIdArray, type OrganizationRole, organizationScopeSchema } from '../schemas.ts';
import { listOrganizationScopes, listRoleResourceScopes } from './role-queries.ts';

const tag = 'Organization roles';

/** What an organization role grants: organization scopes, and scopes of API resources. */
export function roleGrantRoutes(api: Api, db: Knex): void {
  linkSetRoutes(api, db, {
    tag,
    path: '/organization-roles/:id/scopes',
    params: idParams,
    parent: organizationRoleParent,
    child: {
      param: 'organizationScopeId',
      id: entityId,
      check: async (trx, _role, body) => {
        await requireOrganizationScopes(trx, body.organizationScopeIds);
        return body.organizationScopeIds;
      },
      missing: (id) => new RequestError('entity.not_exists_with_id', { entity: 'organization scope', id }),
    },
    store: linkStore(({ id }: OrganizationRole) => organizationLinks.roleScopes(id)),
    list: {
      summary: 'List the organization scopes of an organization role',
      query: paginationQuery,
      response: z.array(organizationScopeSchema),
      errors: [404],
      async page(db, role, query) {
        const ids = await linkedIds(db, organizationLinks.roleScopes(role.id));
        return listOrganizationScopes(db, { ids }, pageOf(query));
      },
    },
    add: {
      summary: 'Add organization scopes to an organization role (scopes it has already are ignored)',
      body: z.strictObject({ organizationScopeIds: nonEmptyIdArray }),
      status: 201,
      errors: [404, 422],
    },
    replace: {
      summary: 'Replace the organization scopes of an organization role',
      body: z.strictObject({ organizationScopeIds: idArray }),
      errors: [404, 422],
    },
    remove: { summary: 'Remove an organization scope from an organization role', errors: [404] },
  });

  linkSetRoutes(api, db, {
    tag,
    path: '/organization-roles/:id/resource-scopes',
    params: idParams,
    parent: organizationRoleParent,
    child: {
      param: 'scopeId',
      id: entityId,
      check: async (trx, role, body) => {
        await requireResourceScopes(trx, body.scopeIds, role.type);
        return body.scopeIds;
      },
      missing: (id) => new RequestError('entity.not_exists_with_id', { entity: 'scope', id }),
    },
    store: linkStore(({ id }: OrganizationRole) => organizationLinks.roleResourceScopes(id)),
    list: {
      summary: 'List the API resource scopes of an organization role',
      query: paginationQuery,
      response: z.array(scopeSchema),
      errors: [404],
      page: (db, role, query) => listRoleResourceScopes(db, role.id, pageOf(query)),
    },
    add: {
      summary: 'Add API resource scopes to an organization role (scopes it has already are ignored)',
      body: z.strictObject({ scopeIds: nonEmptyIdArray }),
      status: 201,
      errors: [404, 422],
    },
    replace: {
      summary: 'Replace the API resource scopes of an organization role',
      body: z.strictObject({ scopeIds: idArray }),
      errors: [404, 422],
    },
    remove: { summary: 'Remove an API resource scope from an organization role', errors: [404] },
  });
}
