import { z } from 'zod';

import type { Api } from '../http/api/route.ts';
import { RequestError } from '../http/errors.ts';
import {
  findUserSession,
  listUserSessions,
  revokeGrantsTargets,
  revokeUserSession,
  userSessionSchema,
} from '../sessions/user-sessions.ts';
import { userParams } from '../shared/entity-id.ts';
import { getUserRow } from './users.ts';

const tag = 'Users';
const sessionParams = userParams.extend({ sessionId: z.string().min(1).max(64) });
const notFound = () => new RequestError('oidc.session_not_found');

/** A person's sign-in sessions (Logto's user sessions), seen and ended one by one by administrators. */
export function userSessionRoutes(api: Api): void {
  api.add(
    {
      method: 'get',
      path: '/users/:userId/sessions',
      summary: "A user's active sign-in sessions (each named by `payload.uid`)",
      tag,
      params: userParams,
      response: z.object({ sessions: z.array(userSessionSchema) }),
      errors: [404],
    },
    async ({ params }, _ctx, db) => {
      await getUserRow(db, params.userId);
      return { sessions: await listUserSessions(db, params.userId) };
    },
  );

  api.add(
    {
      method: 'get',
      path: '/users/:userId/sessions/:sessionId',
      summary: "One of a user's sessions, by its uid",
      tag,
      params: sessionParams,
      response: userSessionSchema,
      errors: [404],
    },
    async ({ params }, _ctx, db) => {
      await getUserRow(db, params.userId);
      const session = await findUserSession(db, params.userId, params.sessionId);
      if (!session) {
        throw notFound();
      }
      return session;
    },
  );

  api.add(
    {
      method: 'delete',
      path: '/users/:userId/sessions/:sessionId',
      summary: "End one of a user's sessions; revokeGrantsTarget (all | firstParty) also revokes the grants it made",
      tag,
      params: sessionParams,
      query: z.object({ revokeGrantsTarget: z.enum(revokeGrantsTargets).optional() }),
      errors: [404],
    },
    async ({ params, query }, _ctx, trx) => {
      await getUserRow(trx, params.userId);
      if (!(await revokeUserSession(trx, params.userId, params.sessionId, query.revokeGrantsTarget))) {
        throw notFound();
      }
    },
  );
}
