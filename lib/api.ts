import type Koa from 'koa';
import { z } from 'zod';

import { accountGrantRoutes } from './account/grant-routes.ts';
import { accountMfaRoutes } from './account/mfa-routes.ts';
import { accountProfileRoutes } from './account/profile-routes.ts';
import { accountRoutes } from './account/routes.ts';
import { accountSessionRoutes } from './account/session-routes.ts';
import { accountSettingsRoutes } from './account/settings-routes.ts';
import { applicationRoutes } from './applications/routes.ts';
import { applicationSecretRoutes } from './applications/secret-routes.ts';
import { auditLogRoutes } from './audit/routes.ts';
import { auditTrail } from './audit/trail.ts';
import { connectorRoutes } from './connectors/routes.ts';
import { consoleRoutes } from './console/routes.ts';
import { customPhraseRoutes } from './custom-phrases/routes.ts';
import { dashboardRoutes } from './dashboard/routes.ts';
import { consentRoutes } from './experience/consent/consent-routes.ts';
import type { ExperienceContext } from './experience/context.ts';
import { developmentMessageRoutes } from './experience/development-messages-routes.ts';
import { externalSignInRoutes } from './experience/external/external-sign-in-routes.ts';
import { sentinelRoutes } from './experience/lockout/lockout-routes.ts';
import { experienceMfaCodeRoutes } from './experience/mfa/mfa-code-routes.ts';
import { experienceMfaRoutes } from './experience/mfa/mfa-routes.ts';
import { experienceWebAuthnRoutes } from './experience/mfa/mfa-web-authn-routes.ts';
import { passkeySignInRoutes } from './experience/mfa/passkey-sign-in-routes.ts';
import { experienceRoutes } from './experience/routes.ts';
import { oneTimeTokenVerificationRoutes } from './experience/verification/one-time-token-routes.ts';
import { verificationCodeRoutes } from './experience/verification/verification-code-routes.ts';
import { experienceVerificationRoutes } from './experience/verification/verification-routes.ts';
import { hookDeliveryRoutes } from './hooks/delivery/delivery-routes.ts';
import { emittedEvents } from './hooks/effects.ts';
import { webhookEntries } from './hooks/event-schemas.ts';
import { hookJobRoutes } from './hooks/jobs/job-routes.ts';
import { hookRoutes } from './hooks/routes.ts';
import { publicKeyRoutes } from './hooks/signing/signing-key-routes.ts';
import { buildOpenApiDocument } from './http/api/openapi.ts';
import { Api } from './http/api/route.ts';
import { jsonBody } from './http/body.ts';
import { errorHandler } from './http/error-handler.ts';
import { RequestError } from './http/errors.ts';
import { refuseCrossSite } from './http/pages/same-origin.ts';
import { noteManagementActor } from './management/audit-actor.ts';
import { requireManagementToken } from './management/auth.ts';
import { eventDataSchemas } from './management/event-data-schemas.ts';
import { managementEvents } from './management/route-events.ts';
import { emailTemplateRoutes } from './messages/email-template-routes.ts';
import { userMfaRoutes } from './mfa/admin-routes.ts';
import { consentScopeRoutes } from './oidc/consent-scopes/consent-scope-routes.ts';
import { impersonationRoutes } from './oidc/impersonation/impersonation-routes.ts';
import { keyRoutes } from './oidc/keys/key-routes.ts';
import { oneTimeTokenRoutes } from './one-time-tokens/routes.ts';
import { organizationRoutes } from './organizations/routes.ts';
import { personalAccessTokenRoutes } from './personal-access-tokens/routes.ts';
import { resourceRoutes } from './resources/routes.ts';
import { applicationRoleRoutes } from './roles/application-roles-routes.ts';
import { roleRoutes } from './roles/routes.ts';
import { accountCenterRoutes } from './sign-in-experience/account-center/account-center-routes.ts';
import { captchaProviderRoutes } from './sign-in-experience/captcha/routes.ts';
import { publicSignInExperienceRoutes, signInExperienceRoutes } from './sign-in-experience/routes.ts';
import { ssoConnectorRoutes } from './sso/routes.ts';
import { trustedIssuerRoutes } from './trusted-issuers/routes.ts';
import { userGrantRoutes } from './users/grant-routes.ts';
import { userIdentityRoutes } from './users/identity-routes.ts';
import { userLogtoConfigRoutes } from './users/logto-config-routes.ts';
import { userRoleRoutes } from './users/role-routes.ts';
import { userRoutes } from './users/routes.ts';
import { userSessionRoutes } from './users/session-routes.ts';

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

/**
 * Everything under /api, in groups that say who may call them: open (`/status`, `/swagger.json`, the
 * hooks' public keys, the sign-in experience), the console's first run and the experience (they act
 * on the browser's cookie or address, so a write from another site is refused), the account (the
 * user's own access token, which each route checks), and the management API (a management token,
 * required of anything else under /api). Each domain's routes are registered the one way,
 * `xRoutes(group, context)`.
 */
export function useApi(app: Koa, context: ExperienceContext): void {
  const { config, db, cache, logger, audit } = context;
  // What runs ahead of a group's routes: a group acting on the browser's cookie or address refuses
  // another site's writes; the account's routes check the user's token themselves.
  const callers = {
    browser: [refuseCrossSite(config.endpoint), jsonBody],
    user: [jsonBody],
  };

  const management = new Api(db, { effects: managementEvents(cache) });
  applicationRoutes(management, context);
  applicationSecretRoutes(management, context);
  resourceRoutes(management, context);
  roleRoutes(management, context);
  applicationRoleRoutes(management, context);
  keyRoutes(management, context);
  organizationRoutes(management, context);
  userRoutes(management, context);
  userRoleRoutes(management, context);
  userIdentityRoutes(management, context);
  userMfaRoutes(management, context);
  userLogtoConfigRoutes(management, context);
  oneTimeTokenRoutes(management, context);
  userGrantRoutes(management);
  userSessionRoutes(management);
  personalAccessTokenRoutes(management);
  connectorRoutes(management, context);
  ssoConnectorRoutes(management, context);
  signInExperienceRoutes(management, context);
  captchaProviderRoutes(management, context);
  sentinelRoutes(management);
  verificationCodeRoutes(management, context);
  developmentMessageRoutes(management, context);
  emailTemplateRoutes(management, context);
  customPhraseRoutes(management, context);
  auditLogRoutes(management, context);
  impersonationRoutes(management);
  consentScopeRoutes(management);
  accountCenterRoutes(management);
  trustedIssuerRoutes(management, context);
  hookRoutes(management, context);
  hookJobRoutes(management, context);
  hookDeliveryRoutes(management, context);
  dashboardRoutes(management, context);

  const experience = new Api(db, { writes: 'own-transactions', before: callers.browser });
  experienceRoutes(experience, context);
  experienceVerificationRoutes(experience, context);
  oneTimeTokenVerificationRoutes(experience, context);
  externalSignInRoutes(experience, context);
  experienceMfaRoutes(experience, context);
  experienceMfaCodeRoutes(experience, context);
  experienceWebAuthnRoutes(experience, context);
  passkeySignInRoutes(experience, context);
  consentRoutes(experience, context);

  const account = new Api(db, { writes: 'own-transactions', before: callers.user });
  accountRoutes(account, context);
  accountProfileRoutes(account, context);
  accountMfaRoutes(account, context);
  accountSettingsRoutes(account, context);
  accountSessionRoutes(account, context);
  accountGrantRoutes(account, context);

  const firstRun = new Api(db, { effects: emittedEvents(cache), before: callers.browser });
  consoleRoutes(firstRun, context);

  // Reads only: nothing to parse, no one to check.
  const open = new Api(db);
  publicSignInExperienceRoutes(open, context);
  publicKeyRoutes(open, context);
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
      document ??= buildOpenApiDocument(
        {
          open: [...open.specs, ...firstRun.specs],
          authenticated: [...experience.specs, ...account.specs, ...management.specs],
        },
        {
          title: 'Identity service API',
          version: '1',
          serverUrl: config.endpoint,
        },
        webhookEntries(eventDataSchemas(management.specs)),
      );
      return Promise.resolve(document as Record<string, unknown>);
    },
  );

  for (const group of [open, firstRun, experience, account, management]) {
    group.router.prefix('/api');
  }
  const requireToken = requireManagementToken(config, db, cache);
  // Outside the error handler: the trail reads each answer as the client gets it, errors included.
  app.use(auditTrail(audit, management.specs));
  app.use(errorHandler(logger));
  for (const group of [open, firstRun, experience, account]) {
    app.use(group.router.routes());
  }
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
