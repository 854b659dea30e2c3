import type { Knex } from 'knex';
import { z } from 'zod';

import { pageOf, paginationQuery, setTotal } from '../http/api/pagination.ts';
import { type Api, queryBoolean } from '../http/api/route.ts';
import { searchListQuery } from '../http/api/search.ts';
import type { ServiceContext } from '../http/context.ts';
import { orNotFound, RequestError } from '../http/errors.ts';
import { entityId, idParams } from '../shared/entity-id.ts';
import { managementApi } from '../shared/management-api.ts';
import { tenantId } from '../shared/tenant.ts';
import type { Queryable } from '../storage/database.ts';
import { generateId } from '../storage/ids.ts';
import {
  deleteResource,
  deleteScope,
  findResource,
  findResourceByIndicator,
  findResourceForUpdate,
  findScope,
  findScopeByName,
  findScopeForUpdate,
  insertResource,
  insertScope,
  listResources,
  listScopes,
  scopeSearchColumns,
  scopesOfResources,
  setDefaultResource,
  updateResource,
  updateScope,
} from './queries.ts';
import {
  createResourceBody,
  createScopeBody,
  resourceSchema,
  scopeSchema,
  updateResourceBody,
  updateScopeBody,
} from './schemas.ts';

const tag = 'Resources';
const scopeParams = z.object({ resourceId: entityId, scopeId: entityId });

const getResource = async (db: Queryable, id: string) => orNotFound(await findResource(db, id), 'resource', id);
const getResourceForUpdate = async (trx: Knex.Transaction, id: string) =>
  orNotFound(await findResourceForUpdate(trx, id), 'resource', id);

async function assertScopeNameFree(db: Queryable, resourceId: string, name: string): Promise<void> {
  if (await findScopeByName(db, resourceId, name)) {
    throw new RequestError('scope.name_exists', { name });
  }
}

export function resourceRoutes(api: Api, { db }: ServiceContext): void {
  api.add(
    {
      method: 'get',
      path: '/resources',
      summary: 'List API resources',
      tag,
      query: paginationQuery.extend({ includeScopes: queryBoolean.optional() }),
      response: z.array(resourceSchema),
    },
    async ({ query }, ctx) => {
      const { items, total } = await listResources(db, pageOf(query));
      setTotal(ctx, total);
      if (!query.includeScopes) {
        return items;
      }
      const scopes = await scopesOfResources(
        db,
        items.map(({ id }) => id),
      );
      return items.map((resource) => ({
        ...resource,
        scopes: scopes.filter((scope) => scope.resourceId === resource.id),
      }));
    },
  );

  api.add(
    {
      method: 'post',
      path: '/resources',
      summary: 'Create an API resource',
      tag,
      body: createResourceBody,
      response: resourceSchema,
      status: 201,
      errors: [422],
    },
    async ({ body }, _ctx, trx) => {
      if (await findResourceByIndicator(trx, body.indicator)) {
        throw new RequestError('resource.resource_identifier_in_use', { indicator: body.indicator });
      }
      const resource = {
        tenantId,
        id: generateId(),
        name: body.name,
        indicator: body.indicator,
        isDefault: false,
        accessTokenTtl: body.accessTokenTtl ?? 3600,
        isExchangeTarget: body.isExchangeTarget ?? true,
      };
      await insertResource(trx, { ...resource, createdAt: Date.now() });
      return { ...resource, scopes: [] };
    },
  );

  api.add(
    {
      method: 'get',
      path: '/resources/:id',
      summary: 'Get an API resource',
      tag,
      params: idParams,
      response: resourceSchema,
      errors: [404],
    },
    async ({ params }) => getResource(db, params.id),
  );

  api.add(
    {
      method: 'patch',
      path: '/resources/:id',
      summary: 'Update an API resource',
      tag,
      params: idParams,
      body: updateResourceBody,
      response: resourceSchema,
      errors: [404],
    },
    async ({ params, body }, _ctx, trx) => {
      const current = await getResourceForUpdate(trx, params.id);
      // Logto's rule: the management API is the service's, not renamed nor given another lifetime
      // (and token exchange must never climb into it).
      if (current.id === managementApi.resourceId) {
        throw new RequestError('resource.cannot_modify_management_api');
      }
      const next = {
        ...current,
        name: body.name ?? current.name,
        accessTokenTtl: body.accessTokenTtl ?? current.accessTokenTtl,
        isExchangeTarget: body.isExchangeTarget ?? current.isExchangeTarget,
      };
      await updateResource(trx, next);
      return next;
    },
  );

  api.add(
    {
      method: 'patch',
      path: '/resources/:id/is-default',
      summary: 'Set or unset the default API resource',
      tag,
      params: idParams,
      body: z.strictObject({ isDefault: z.boolean() }),
      response: resourceSchema,
      errors: [404],
    },
    async ({ params, body }, _ctx, trx) => {
      const current = await getResourceForUpdate(trx, params.id);
      if (current.id === managementApi.resourceId) {
        throw new RequestError('resource.cannot_modify_management_api');
      }
      await setDefaultResource(trx, current.id, body.isDefault);
      return { ...current, isDefault: body.isDefault };
    },
  );

  api.add(
    {
      method: 'delete',
      path: '/resources/:id',
      summary: 'Delete an API resource and its scopes',
      tag,
      params: idParams,
      errors: [404],
    },
    async ({ params }, _ctx, trx) => {
      if (params.id === managementApi.resourceId) {
        throw new RequestError('resource.cannot_delete_management_api');
      }
      if (!(await deleteResource(trx, params.id))) {
        throw new RequestError('entity.not_exists_with_id', { entity: 'resource', id: params.id });
      }
    },
  );

  api.add(
    {
      method: 'get',
      path: '/resources/:resourceId/scopes',
      summary: 'List the scopes (permissions) of an API resource',
      tag,
      params: z.object({ resourceId: entityId }),
      query: searchListQuery(scopeSearchColumns, {}),
      response: z.array(scopeSchema),
      errors: [404],
    },
    async ({ params, query }, ctx) => {
      await getResource(db, params.resourceId);
      const { items, total } = await listScopes(db, params.resourceId, query.search, pageOf(query));
      setTotal(ctx, total);
      return items;
    },
  );

  api.add(
    {
      method: 'post',
      path: '/resources/:resourceId/scopes',
      summary: 'Create a scope (permission) of an API resource',
      tag,
      params: z.object({ resourceId: entityId }),
      body: createScopeBody,
      response: scopeSchema,
      status: 201,
      errors: [404, 422],
    },
    async ({ params, body }, _ctx, trx) => {
      // Locked: of two scopes created with one name at once, the second sees the first.
      const resource = await getResourceForUpdate(trx, params.resourceId);
      if (resource.id === managementApi.resourceId) {
        throw new RequestError('resource.cannot_modify_management_api');
      }
      await assertScopeNameFree(trx, resource.id, body.name);
      const scope = {
        tenantId,
        id: generateId(),
        resourceId: resource.id,
        name: body.name,
        description: body.description ?? null,
        createdAt: Date.now(),
      };
      await insertScope(trx, scope);
      return scope;
    },
  );

  api.add(
    {
      method: 'patch',
      path: '/resources/:resourceId/scopes/:scopeId',
      summary: 'Update a scope (permission) of an API resource',
      tag,
      params: scopeParams,
      body: updateScopeBody,
      response: scopeSchema,
      errors: [404, 422],
    },
    async ({ params, body }, _ctx, trx) => {
      const scope = await findScopeForUpdate(trx, params.resourceId, params.scopeId);
      if (!scope) {
        throw new RequestError('entity.not_exists_with_id', { entity: 'scope', id: params.scopeId });
      }
      if (scope.id === managementApi.scopeId) {
        throw new RequestError('resource.cannot_modify_management_api');
      }
      if (body.name !== undefined && body.name !== scope.name) {
        await assertScopeNameFree(trx, scope.resourceId, body.name);
      }
      const next = {
        ...scope,
        name: body.name ?? scope.name,
        description: body.description === undefined ? scope.description : body.description,
      };
      await updateScope(trx, next);
      return next;
    },
  );

  api.add(
    {
      method: 'delete',
      path: '/resources/:resourceId/scopes/:scopeId',
      summary: 'Delete a scope (permission); roles holding it lose it',
      tag,
      params: scopeParams,
      errors: [404],
    },
    async ({ params }, _ctx, trx, effects) => {
      const scope = await findScope(trx, params.resourceId, params.scopeId);
      if (!scope) {
        throw new RequestError('entity.not_exists_with_id', { entity: 'scope', id: params.scopeId });
      }
      if (scope.id === managementApi.scopeId) {
        throw new RequestError('resource.cannot_delete_management_api');
      }
      await deleteScope(trx, scope.id);
      await effects.emit('Scope.Deleted', { data: scope });
    },
  );
}
