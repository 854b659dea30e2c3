import { z } from 'zod';

import type { Api } from '../http/route.ts';
import { mfaTarget } from '../mfa/second-factor.ts';
import { clearTargets, sentinelTarget } from './sentinel.ts';

/** Admin unlock of identifiers locked after failed verifications. */
export function sentinelRoutes(api: Api): void {
  api.add(
    {
      method: 'post',
      path: '/sentinel-activities/delete',
      summary: 'Unlock identifiers: forget their failed attempts and end their lockout',
      tag: 'Sentinel',
      body: z.strictObject({
        targetType: z.enum(['User', 'App']).optional(),
        targets: z.array(z.string().min(1).max(128)).min(1).max(100),
      }),
    },
    async ({ body }, _ctx, trx) => {
      // A target is an identifier as a user typed it (a username, an email or a phone number), or a
      // user id, whose second factor locks apart from the identifiers.
      const keys = body.targets.flatMap((value) => [
        sentinelTarget('username', value),
        sentinelTarget('email', value),
        sentinelTarget('phone', value),
        mfaTarget(value),
      ]);
      await clearTargets(trx, keys);
    },
  );
}
