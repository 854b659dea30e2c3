import { z } from 'zod';

import type { ExperienceContext } from '../experience/context.ts';
import type { Api } from '../http/api/route.ts';
import { RequestError } from '../http/errors.ts';
import { appTypeQuery, grantsResponse, listUserGrants, revokeUserGrant } from '../sessions/grants.ts';
import { accountSession } from './auth.ts';
import { proofHeader, requireIdentityProof } from './verifications.ts';

const tag = 'Account';

/**
 * The applications the signed-in user has given access to (Logto's Account API grants): listed with
 * the access token alone; revoking one needs a fresh identity proof (`logto-verification-id`).
 */
export function accountGrantRoutes(api: Api<'own-transactions'>, { db, oidc }: ExperienceContext): void {
  api.add(
    {
      method: 'get',
      path: '/my-account/grants',
      summary: 'My active grants to applications (appType: firstParty | thirdParty)',
      tag,
      query: appTypeQuery,
      response: grantsResponse,
      errors: [401],
    },
    async ({ query }, ctx) => {
      const { user } = await accountSession(ctx, db, oidc);
      return { grants: await listUserGrants(db, user.id, query.appType) };
    },
  );

  api.add(
    {
      method: 'delete',
      path: '/my-account/grants/:grantId',
      summary: "Revoke an application's access (header logto-verification-id: a fresh identity proof)",
      tag,
      params: z.object({ grantId: z.string().min(1).max(64) }),
      errors: [401, 404],
    },
    async ({ params }, ctx) => {
      const { user } = await accountSession(ctx, db, oidc);
      await requireIdentityProof(db, user, proofHeader(ctx));
      if (!(await revokeUserGrant(db, user.id, params.grantId))) {
        throw new RequestError('entity.not_exists_with_id', { entity: 'grant', id: params.grantId });
      }
    },
  );
}
