import { z } from 'zod';

import type { Api } from '../http/route.ts';
import type { ServiceContext } from '../http/context.ts';
import { getUserRow, getUserRowForUpdate } from '../users/users.ts';
import { deleteFactor, mfaVerificationSchema, toMfaVerification } from './factors.ts';
import { listFactors } from './queries.ts';

const tag = 'User MFA';
const userParams = z.object({ userId: z.string().min(1).max(21) });

/** Admins see a user's second factors and remove one (a lost phone); binding is the user's own act. */
export function userMfaRoutes(api: Api, { db }: ServiceContext): void {
  api.add(
    {
      method: 'get',
      path: '/users/:userId/mfa-verifications',
      summary: "List a user's MFA factors (never their secrets)",
      tag,
      params: userParams,
      response: z.array(mfaVerificationSchema),
      errors: [404],
    },
    async ({ params }) => {
      await getUserRow(db, params.userId);
      return (await listFactors(db, params.userId)).map(toMfaVerification);
    },
  );

  api.add(
    {
      method: 'delete',
      path: '/users/:userId/mfa-verifications/:verificationId',
      summary: "Remove one of a user's MFA factors",
      tag,
      params: userParams.extend({ verificationId: z.string().min(1).max(21) }),
      errors: [404],
    },
    async ({ params }, _ctx, trx) => {
      await getUserRowForUpdate(trx, params.userId);
      await deleteFactor(trx, params.userId, params.verificationId);
    },
  );
}
