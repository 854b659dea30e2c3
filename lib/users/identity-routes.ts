import { z } from 'zod';

import type { Api } from '../http/api/route.ts';
import type { ServiceContext } from '../http/context.ts';
import { foreignJsonInput } from '../http/limits.ts';
import { entityId, userParams } from '../shared/entity-id.ts';
import { linkSocialIdentity, unlinkSocialIdentity, unlinkSsoIdentity } from './identities.ts';
import { toUser } from './queries.ts';
import { userSchema } from './schemas.ts';
import { listSsoIdentities } from './sso-identity-queries.ts';
import { getUserRow, getUserRowForUpdate } from './users.ts';

const tag = 'User identities';
const targetParams = userParams.extend({ target: z.string().min(1).max(64) });
const identitiesSchema = userSchema.shape.identities;
const details = z.record(z.string(), z.unknown());

/** The identities users hold at social connectors and enterprise IdPs: seen, set and removed by admins. */
export function userIdentityRoutes(api: Api, { db }: ServiceContext): void {
  api.add(
    {
      method: 'get',
      path: '/users/:userId/identities',
      summary: "A user's social identities, by connector target",
      tag,
      params: userParams,
      response: identitiesSchema,
      errors: [404],
    },
    async ({ params }) => toUser(await getUserRow(db, params.userId)).identities,
  );

  api.add(
    {
      method: 'get',
      path: '/users/:userId/all-identities',
      summary: "A user's social and enterprise SSO identities",
      tag,
      params: userParams,
      response: z.object({
        socialIdentities: z.array(
          z.object({ target: z.string(), identity: z.object({ userId: z.string(), details: details.optional() }) }),
        ),
        ssoIdentities: z.array(
          z.object({ ssoConnectorId: z.string(), ssoIdentity: z.record(z.string(), z.unknown()) }),
        ),
      }),
      errors: [404],
    },
    async ({ params }) => {
      const user = toUser(await getUserRow(db, params.userId));
      return {
        socialIdentities: Object.entries(user.identities).map(([target, identity]) => ({ target, identity })),
        ssoIdentities: (await listSsoIdentities(db, user.id)).map((ssoIdentity) => ({
          ssoConnectorId: ssoIdentity.ssoConnectorId,
          ssoIdentity,
        })),
      };
    },
  );

  api.add(
    {
      method: 'put',
      path: '/users/:userId/identities/:target',
      summary: "Set a user's social identity at a target (201 when new, 200 when replaced)",
      tag,
      params: targetParams,
      body: z.strictObject({ userId: z.string().min(1).max(255), details: foreignJsonInput.optional() }),
      response: identitiesSchema,
      errors: [404, 422],
    },
    async ({ params, body }, ctx, trx) => {
      const had = Object.hasOwn(toUser(await getUserRowForUpdate(trx, params.userId)).identities, params.target);
      await linkSocialIdentity(trx, params.userId, params.target, body);
      ctx.status = had ? 200 : 201;
      return toUser(await getUserRow(trx, params.userId)).identities;
    },
  );

  api.add(
    {
      method: 'delete',
      path: '/users/:userId/identities/:target',
      summary: "Remove a user's social identity",
      tag,
      params: targetParams,
      response: userSchema,
      errors: [404],
    },
    async ({ params }, _ctx, trx) => {
      await unlinkSocialIdentity(trx, params.userId, params.target);
      return toUser(await getUserRow(trx, params.userId));
    },
  );

  api.add(
    {
      method: 'delete',
      path: '/users/:userId/sso-identities/:ssoConnectorId',
      summary: "Remove a user's enterprise SSO identity (their next SSO sign-in links it again by email)",
      tag,
      params: userParams.extend({ ssoConnectorId: entityId }),
      errors: [404],
    },
    async ({ params }, _ctx, trx) => {
      await getUserRowForUpdate(trx, params.userId);
      await unlinkSsoIdentity(trx, params.userId, params.ssoConnectorId);
    },
  );
}
