import { z } from 'zod';

import type { Api } from '../../http/api/route.ts';
import { clearClientThrottles } from '../../oidc/clients/client-auth-throttle.ts';
import { findUserIdsByAnyIdentifier } from '../../users/queries.ts';
import { accountTarget, identifierTarget, mfaTarget } from './lockout.ts';
import { clearTargets } from './lockout-queries.ts';

/** Admin unlock of accounts locked after failed verifications, and of applications after failed client authentications. */
export function sentinelRoutes(api: Api): void {
  api.add(
    {
      method: 'post',
      path: '/sentinel-activities/delete',
      summary:
        'Unlock accounts (targetType User, the default) or applications (App): forget their failed attempts and end their lockout',
      tag: 'Sentinel',
      body: z.strictObject({
        targetType: z.enum(['User', 'App']).optional(),
        targets: z.array(z.string().min(1).max(128)).min(1).max(100),
      }),
    },
    async ({ body }, _ctx, trx) => {
      if (body.targetType === 'App') {
        // Application ids refused at the token endpoint after failed client authentications.
        await clearClientThrottles(trx, body.targets);
        return;
      }
      // A target is an identifier as a user typed it (a username, an email or a phone number) or a
      // user id. Whichever names an account unlocks all of it: its sign-in and its second factor.
      const userIds = [...body.targets, ...(await findUserIdsByAnyIdentifier(trx, body.targets))];
      const keys = [
        ...body.targets.flatMap((value) => [
          identifierTarget('username', value),
          identifierTarget('email', value),
          identifierTarget('phone', value),
        ]),
        ...userIds.flatMap((id) => [accountTarget(id), mfaTarget(id)]),
      ];
      await clearTargets(trx, keys);
    },
  );
}
