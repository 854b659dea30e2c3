import { z } from 'zod';

import type { ExperienceContext } from '../experience/context.ts';
import type { Api } from '../http/api/route.ts';
import { RequestError } from '../http/errors.ts';
import { sessionsScope } from '../oidc/account.ts';
import {
  listUserSessions,
  revokeGrantsTargets,
  revokeUserSession,
  userSessionSchema,
} from '../sessions/user-sessions.ts';
import { assertFieldEditable, assertFieldEnabled } from '../sign-in-experience/account-center/account-center.ts';
import { withTransaction } from '../storage/transaction.ts';
import { accountSession, assertScope } from './auth.ts';
import { proofHeader, requireIdentityProof } from './verifications.ts';

const tag = 'Account';

/**
 * The signed-in user's sign-in sessions (Logto's Account API): listed and ended one by one, with the
 * `urn:logto:scope:sessions` scope and a `logto-verification-id` proof; the caller's own is `isCurrent`.
 */
export function accountSessionRoutes(api: Api<'own-transactions'>, { db, oidc }: ExperienceContext): void {
  api.add(
    {
      method: 'get',
      path: '/my-account/sessions',
      summary: 'My active sign-in sessions (header logto-verification-id; scope urn:logto:scope:sessions)',
      tag,
      response: z.object({ sessions: z.array(userSessionSchema.extend({ isCurrent: z.boolean() })) }),
      errors: [400, 401],
    },
    async (_input, ctx) => {
      const session = await accountSession(ctx, db, oidc);
      await requireIdentityProof(db, session.user, proofHeader(ctx));
      assertFieldEnabled(session.center, 'session');
      assertScope(session, sessionsScope, 401);
      const sessions = await listUserSessions(db, session.user.id);
      return { sessions: sessions.map((each) => ({ ...each, isCurrent: each.payload.uid === session.sessionUid })) };
    },
  );

  api.add(
    {
      method: 'delete',
      path: '/my-account/sessions/:sessionId',
      summary: 'End one of my sessions; revokeGrantsTarget (all | firstParty) also revokes the grants it made',
      tag,
      params: z.object({ sessionId: z.string().min(1).max(64) }),
      query: z.object({ revokeGrantsTarget: z.enum(revokeGrantsTargets).optional() }),
      errors: [400, 401, 404],
    },
    async ({ params, query }, ctx) => {
      const session = await accountSession(ctx, db, oidc);
      await requireIdentityProof(db, session.user, proofHeader(ctx));
      assertFieldEditable(session.center, 'session');
      assertScope(session, sessionsScope, 401);
      const ended = await withTransaction(db, (trx) =>
        revokeUserSession(trx, session.user.id, params.sessionId, query.revokeGrantsTarget),
      );
      if (!ended) {
        throw new RequestError('oidc.session_not_found');
      }
    },
  );
}
