import { z } from 'zod';

import type { Api } from '../http/api/route.ts';
import { RequestError } from '../http/errors.ts';
import { appTypeQuery, grantsResponse, listUserGrants, revokeUserGrant } from '../sessions/grants.ts';
import { userParams } from '../shared/entity-id.ts';
import { getUserRow } from './users.ts';

const tag = 'Users';
const grantParams = userParams.extend({ grantId: z.string().min(1).max(64) });

/** The applications a user has given access to (Logto's user grants): seen and revoked by admins. */
export function userGrantRoutes(api: Api): void {
  api.add(
    {
      method: 'get',
      path: '/users/:userId/grants',
      summary: "A user's active grants to applications (appType: firstParty | thirdParty)",
      tag,
      params: userParams,
      query: appTypeQuery,
      response: grantsResponse,
      errors: [404],
    },
    async ({ params, query }, _ctx, trx) => {
      await getUserRow(trx, params.userId);
      return { grants: await listUserGrants(trx, params.userId, query.appType) };
    },
  );

  api.add(
    {
      method: 'delete',
      path: '/users/:userId/grants/:grantId',
      summary: "Revoke a user's grant, and the tokens issued under it",
      tag,
      params: grantParams,
      errors: [404],
    },
    async ({ params }, ctx, trx) => {
      await getUserRow(trx, params.userId);
      if (!(await revokeUserGrant(trx, params.userId, params.grantId))) {
        throw new RequestError('entity.not_exists_with_id', { entity: 'grant', id: params.grantId });
      }
      ctx.status = 204;
    },
  );
}
