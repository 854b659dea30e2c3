import type { Knex } from 'knex';
import type Koa from 'koa';
import { z } from 'zod';

import { accountRoutes } from './account/routes.ts';
import { applicationRoutes } from './applications/routes.ts';
import type { AuditLog } from './audit/audit-log.ts';
import { auditLogRoutes } from './audit/routes.ts';
import { auditTrail } from './audit/trail.ts';
import { connectorRoutes } from './connectors/routes.ts';
import type { Config } from './config/env.ts';
import { consoleRoutes } from './console/routes.ts';
import { dashboardRoutes } from './dashboard/routes.ts';
import { createConnectors } from './messages/index.ts';
import { developmentMessageRoutes } from './experience/development-messages-routes.ts';
import { externalSignInRoutes } from './experience/external-sign-in-routes.ts';
import { experienceRoutes } from './experience/routes.ts';
import { experienceSessions } from './experience/session.ts';
import { publicSignInExperienceRoutes, signInExperienceRoutes } from './sign-in-experience/routes.ts';
import { sentinelRoutes } from './experience/sentinel-routes.ts';
import { verificationCodeRoutes } from './experience/verification-code-routes.ts';
import { experienceVerificationRoutes } from './experience/verification-routes.ts';
import { hookRoutes } from './hooks/routes.ts';
import { jsonBody } from './http/body.ts';
import { errorHandler } from './http/error-handler.ts';
import { RequestError } from './http/errors.ts';
import type { Logger } from './http/logger.ts';
import { buildOpenApiDocument } from './http/openapi.ts';
import { Api } from './http/route.ts';
import { refuseCrossSite } from './http/same-origin.ts';
import { impersonationRoutes } from './oidc/impersonation-routes.ts';
import { accountMfaRoutes } from './account/mfa-routes.ts';
import { userMfaRoutes } from './mfa/admin-routes.ts';
import { experienceMfaRoutes } from './experience/mfa-routes.ts';
import { keyRoutes } from './oidc/key-routes.ts';
import type { OidcService } from './oidc/mount.ts';
import { organizationRoutes } from './organizations/routes.ts';
import { resourceRoutes } from './resources/routes.ts';
import { applicationRoleRoutes } from './roles/application-roles-routes.ts';
import { roleRoutes } from './roles/routes.ts';
import { userRoleRoutes } from './users/role-routes.ts';
import { ssoConnectorRoutes } from './sso/routes.ts';
import type { SharedCache } from './storage/shared-cache.ts';
import { userIdentityRoutes } from './users/identity-routes.ts';
import { userRoutes } from './users/routes.ts';
import { noteManagementActor } from './management/audit-actor.ts';
import { requireManagementToken } from './management/auth.ts';
import { managementEvents } from './management/route-events.ts';

/** `middleware` for the paths `applies` to; the others pass by it. */
const onlyUnder =
  (applies: (path: string) => boolean, middleware: Koa.Middleware): Koa.Middleware =>
  async (ctx, next) => {
    if (applies(ctx.path)) {
      await middleware(ctx, next);
    } else {
      await next();
    }
  };

export type ApiDependencies = {
  config: Config;
  db: Knex;
  cache: SharedCache;
  logger: Logger;
  oidc: OidcService;
  audit: AuditLog;
};

/**
 * Everything under /api, in three groups: open (`/status`, `/swagger.json`, the console's sign-in
 * settings and first run), the end user's (the experience, authenticated by the interaction cookie;
 * the account, by the user's own access token), and the management API (a management token).
 */
export function useApi(app: Koa, { config, db, cache, logger, oidc, audit }: ApiDependencies): void {
  const connectors = createConnectors(config, db);

  const management = new Api(db, { effects: managementEvents(cache) });
  applicationRoutes(management, db);
  resourceRoutes(management, db);
  roleRoutes(management, db);
  applicationRoleRoutes(management, db);
  keyRoutes(management, db);
  organizationRoutes(management, db, cache);
  userRoutes(management, db, cache);
  userRoleRoutes(management, db);
  userIdentityRoutes(management, db);
  userMfaRoutes(management, db);
  connectorRoutes(management, db, cache);
  ssoConnectorRoutes(management, db, cache);
  signInExperienceRoutes(management, db, cache);
  sentinelRoutes(management);
  verificationCodeRoutes(management, connectors);
  developmentMessageRoutes(management, db, config);
  auditLogRoutes(management, db);
  impersonationRoutes(management);
  hookRoutes(management, db, cache, config);
  dashboardRoutes(management, db);

  const experience = new Api(db, { writes: 'own-transactions' });
  const sessions = experienceSessions(db, oidc);
  experienceRoutes(experience, db, cache, sessions, oidc, audit);
  experienceVerificationRoutes(experience, db, cache, sessions, connectors);
  externalSignInRoutes(experience, db, cache, sessions, logger);
  experienceMfaRoutes(experience, db, cache, sessions, config);
  accountRoutes(experience, db, cache, oidc, connectors);
  accountMfaRoutes(experience, db, cache, oidc, config);

  const open = new Api(db);
  publicSignInExperienceRoutes(open, db, cache);
  consoleRoutes(open, db, cache, config);
  open.add(
    {
      method: 'get',
      path: '/status',
      summary: 'Health check: 204 when the service and its database answer',
      tag: 'Status',
    },
    async () => {
      await db.raw('select 1');
    },
  );
  let document: unknown;
  open.add(
    {
      method: 'get',
      path: '/swagger.json',
      summary: 'This OpenAPI document',
      tag: 'Status',
      response: z.record(z.string(), z.unknown()),
    },
    () => {
      document ??= buildOpenApiDocument([...open.specs, ...experience.specs, ...management.specs], {
        title: 'Identity service API',
        version: '1',
        serverUrl: config.endpoint,
      });
      return Promise.resolve(document as Record<string, unknown>);
    },
  );

  for (const group of [open, experience, management]) {
    group.router.prefix('/api');
  }
  const requireToken = requireManagementToken(config, db, cache);
  // Outside the error handler: the trail reads each answer as the client gets it, errors included.
  app.use(auditTrail(audit, management.specs));
  app.use(errorHandler(logger));
  // The experience and the console's first run act on the browser's cookie or address, not on a token.
  const cookieAuthenticated = /^\/api\/(experience(\/|$)|console\/first-administrator$)/;
  app.use(refuseCrossSite(config.endpoint, (path) => cookieAuthenticated.test(path)));
  const tokenlessBodies = /^\/api\/(experience|verifications|my-account|console)(\/|$)/;
  app.use(onlyUnder((path) => tokenlessBodies.test(path), jsonBody));
  app.use(open.router.routes());
  app.use(experience.router.routes());
  const underApi = (path: string) => path === '/api' || path.startsWith('/api/');
  app.use(onlyUnder(underApi, requireToken));
  app.use(noteManagementActor);
  app.use(onlyUnder(underApi, jsonBody));
  // A path no route answers is an API error like any other: JSON 404 (or 405 below).
  app.use(async (ctx, next) => {
    await next();
    if (underApi(ctx.path) && ctx.status === 404 && ctx.body === undefined) {
      throw new RequestError('request.not_found');
    }
  });
  app.use(management.router.routes());
  const methodNotAllowed = () => new RequestError('request.method_not_allowed');
  app.use(management.router.allowedMethods({ throw: true, methodNotAllowed, notImplemented: methodNotAllowed }));
}
