import { z } from 'zod';

import type { ExperienceContext } from '../experience/context.ts';
import type { Api } from '../http/api/route.ts';
import { RequestError } from '../http/errors.ts';
import { sessionsScope } from '../oidc/account.ts';
import { appTypeQuery, grantsResponse, listUserGrants, revokeUserGrant } from '../sessions/grants.ts';
import { assertFieldEditable, assertFieldEnabled } from '../sign-in-experience/account-center/account-center.ts';
import { accountSession, assertScope } from './auth.ts';
import { proofHeader, requireIdentityProof } from './verifications.ts';

const tag = 'Account';

/**
 * The applications the signed-in user has given access to (Logto's Account API grants), governed
 * as the sessions are: the `session` field, the `urn:logto:scope:sessions` scope and a
 * `logto-verification-id` proof, to list them as to revoke one.
 */
export function accountGrantRoutes(api: Api<'own-transactions'>, { db, oidc }: ExperienceContext): void {
  api.add(
    {
      method: 'get',
      path: '/my-account/grants',
      summary:
        'My active grants to applications (appType: firstParty | thirdParty; header logto-verification-id; scope urn:logto:scope:sessions)',
      tag,
      query: appTypeQuery,
      response: grantsResponse,
      errors: [401],
    },
    async ({ query }, ctx) => {
      const session = await accountSession(ctx, db, oidc);
      await requireIdentityProof(db, session.user, proofHeader(ctx));
      assertFieldEnabled(session.center, 'session');
      assertScope(session, sessionsScope, 401);
      return { grants: await listUserGrants(db, session.user.id, query.appType) };
    },
  );

  api.add(
    {
      method: 'delete',
      path: '/my-account/grants/:grantId',
      summary: "Revoke an application's access (header logto-verification-id; scope urn:logto:scope:sessions)",
      tag,
      params: z.object({ grantId: z.string().min(1).max(64) }),
      errors: [401, 404],
    },
    async ({ params }, ctx) => {
      const session = await accountSession(ctx, db, oidc);
      const { user } = session;
      await requireIdentityProof(db, user, proofHeader(ctx));
      assertFieldEditable(session.center, 'session');
      assertScope(session, sessionsScope, 401);
      if (!(await revokeUserGrant(db, user.id, params.grantId))) {
        throw new RequestError('entity.not_exists_with_id', { entity: 'grant', id: params.grantId });
      }
    },
  );
}
