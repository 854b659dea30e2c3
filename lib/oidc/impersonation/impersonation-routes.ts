import { randomBytes } from 'node:crypto';
import { z } from 'zod';

import type { Api } from '../../http/api/route.ts';
import { foreignJsonInput } from '../../http/limits.ts';
import { entityId } from '../../shared/entity-id.ts';
import type { ManagementAuth } from '../../shared/management-api.ts';
import { generateId } from '../../storage/ids.ts';
import { getUserRow } from '../../users/users.ts';
import { hashSubjectToken, insertImpersonationToken } from './subject-token-queries.ts';

/** Impersonation subject tokens live ten minutes and are used once (Logto's numbers). */
const lifetime = 600;

export function impersonationRoutes(api: Api): void {
  api.add(
    {
      method: 'post',
      path: '/subject-tokens',
      summary: 'Create a single-use impersonation subject token for a user (for support and admin tools)',
      tag: 'Token exchange',
      body: z.strictObject({ userId: entityId, context: foreignJsonInput.optional() }),
      response: z.object({ subjectToken: z.string(), expiresIn: z.number() }),
      status: 201,
      errors: [404],
    },
    async ({ body }, ctx, trx) => {
      await getUserRow(trx, body.userId);
      const subjectToken = `sub_${randomBytes(32).toString('base64url')}`;
      const now = Date.now();
      // Only a hash is stored: a database reader cannot act as the user.
      await insertImpersonationToken(trx, {
        id: generateId(),
        tokenHash: hashSubjectToken(subjectToken),
        userId: body.userId,
        applicationId: (ctx.state.auth as ManagementAuth | undefined)?.clientId ?? null,
        context: body.context ?? {},
        createdAt: now,
        expiresAt: now + lifetime * 1000,
      });
      return { subjectToken, expiresIn: lifetime };
    },
  );
}
