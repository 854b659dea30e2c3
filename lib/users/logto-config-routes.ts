import { z } from 'zod';

import type { Api } from '../http/api/route.ts';
import type { ServiceContext } from '../http/context.ts';
import { userParams } from '../shared/entity-id.ts';
import type { UserRow } from './queries.ts';
import { changeUser, getUserRow, getUserRowForUpdate } from './users.ts';

const tag = 'Users';

/** Logto's `logtoConfig` of a user, the part its APIs show: what the person chose to skip. */
const logtoConfigSchema = z.object({
  mfa: z.object({ skipped: z.boolean(), skipMfaOnSignIn: z.boolean() }),
  passkeySignIn: z.object({ skipped: z.boolean() }),
});

const logtoConfigOf = (row: UserRow): z.output<typeof logtoConfigSchema> => ({
  mfa: { skipped: Boolean(row.mfa_skipped), skipMfaOnSignIn: Boolean(row.mfa_skipped_on_sign_in) },
  passkeySignIn: { skipped: Boolean(row.passkey_sign_in_skipped) },
});

export function userLogtoConfigRoutes(api: Api, { db }: ServiceContext): void {
  api.add(
    {
      method: 'get',
      path: '/users/:userId/logto-configs',
      summary: "A user's MFA and passkey sign-in prompts skipped (Logto's logto-configs)",
      tag,
      params: userParams,
      response: logtoConfigSchema,
      errors: [404],
    },
    async ({ params }) => logtoConfigOf(await getUserRow(db, params.userId)),
  );

  api.add(
    {
      method: 'patch',
      path: '/users/:userId/logto-configs',
      summary:
        'Set what a user skipped: the MFA prompt, MFA at sign-in, the passkey sign-in prompt (fields left out are kept)',
      tag,
      params: userParams,
      body: z.strictObject({
        mfa: z.strictObject({ skipped: z.boolean().optional(), skipMfaOnSignIn: z.boolean().optional() }).optional(),
        passkeySignIn: z.strictObject({ skipped: z.boolean().optional() }).optional(),
      }),
      response: logtoConfigSchema,
      errors: [404],
    },
    async ({ params, body }, _ctx, trx) => {
      await getUserRowForUpdate(trx, params.userId);
      await changeUser(trx, params.userId, {
        mfaSkipped: body.mfa?.skipped,
        mfaSkippedOnSignIn: body.mfa?.skipMfaOnSignIn,
        passkeySignInSkipped: body.passkeySignIn?.skipped,
      });
      return logtoConfigOf(await getUserRow(trx, params.userId));
    },
  );
}
