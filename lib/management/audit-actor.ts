import type { Middleware } from 'koa';

import type { ManagementAuth } from '../shared/management-api.ts';
import { noteAuditSubject } from '../shared/request-subject.ts';

/**
 * Names the management token's holder for the audit trail: the application it was issued to, and
 * the user when it is a console administrator's (a client-credentials token's subject is its client).
 */
export const noteManagementActor: Middleware = (ctx, next) => {
  const auth = ctx.state.auth as ManagementAuth | undefined;
  if (auth) {
    noteAuditSubject(ctx, {
      kind: 'management',
      applicationId: auth.clientId,
      userId: auth.sub !== auth.clientId ? auth.sub : undefined,
    });
  }
  return next();
};
