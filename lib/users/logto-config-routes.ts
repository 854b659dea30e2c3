import type { Api } from '../http/api/route.ts';
import type { ServiceContext } from '../http/context.ts';
import { userParams } from '../shared/entity-id.ts';
import { logtoConfigBody, logtoConfigChanges, logtoConfigOf, logtoConfigSchema } from './logto-config.ts';
import { changeUser, getUserRow, getUserRowForUpdate } from './users.ts';

const tag = 'Users';

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
      body: logtoConfigBody,
      response: logtoConfigSchema,
      errors: [404],
    },
    async ({ params, body }, _ctx, trx) => {
      await getUserRowForUpdate(trx, params.userId);
      await changeUser(trx, params.userId, logtoConfigChanges(body));
      return logtoConfigOf(await getUserRow(trx, params.userId));
    },
  );
}
