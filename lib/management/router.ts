import type { Knex } from 'knex';
import type Koa from 'koa';
import { z } from 'zod';

import { applicationRoutes } from '../applications/routes.ts';
import type { Config } from '../config/env.ts';
import { jsonBody } from '../http/body.ts';
import { errorHandler } from '../http/error-handler.ts';
import type { Logger } from '../http/logger.ts';
import { buildOpenApiDocument } from '../http/openapi.ts';
import { Api } from '../http/route.ts';
import { keyRoutes } from '../oidc/key-routes.ts';
import { organizationRoutes } from '../organizations/routes.ts';
import { resourceRoutes } from '../resources/routes.ts';
import { applicationRoleRoutes } from '../roles/application-roles-routes.ts';
import { roleRoutes } from '../roles/routes.ts';
import { userRoleRoutes } from '../roles/user-roles-routes.ts';
import type { SharedCache } from '../storage/shared-cache.ts';
import { userRoutes } from '../users/routes.ts';
import { requireManagementToken } from './auth.ts';

export type ManagementDependencies = { config: Config; db: Knex; cache: SharedCache; logger: Logger };

/** Every management route, behind the token check; `/api/status` and `/api/swagger.json` are open. */
export function useManagementApi(app: Koa, { config, db, cache, logger }: ManagementDependencies): void {
  const api = new Api();
  applicationRoutes(api, db);
  resourceRoutes(api, db);
  roleRoutes(api, db);
  applicationRoleRoutes(api, db);
  keyRoutes(api, db);
  organizationRoutes(api, db);
  userRoutes(api, db);
  userRoleRoutes(api, db);

  const open = new Api();
  open.add({ method: 'get', path: '/status', summary: 'Health check: 204 when the service and its database answer', tag: 'Status' }, async () => {
    await db.raw('select 1');
  });
  let document: unknown;
  open.add(
    { method: 'get', path: '/swagger.json', summary: 'This OpenAPI document', tag: 'Status', response: z.record(z.string(), z.unknown()) },
    async () => {
      document ??= buildOpenApiDocument([...open.specs, ...api.specs], {
        title: 'Identity service management API',
        version: '1',
        serverUrl: config.endpoint,
      });
      return document as Record<string, unknown>;
    },
  );

  api.router.prefix('/api');
  open.router.prefix('/api');
  const requireToken = requireManagementToken(config, db, cache);
  app.use(errorHandler(logger));
  app.use(open.router.routes());
  app.use((ctx, next) => (ctx.path === '/api' || ctx.path.startsWith('/api/') ? requireToken(ctx, next) : next()));
  app.use(jsonBody);
  app.use(api.router.routes());
  app.use(api.router.allowedMethods());
}
