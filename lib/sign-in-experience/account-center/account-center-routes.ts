import type { Api } from '../../http/api/route.ts';
import { currentAccountCenter } from './account-center.ts';
import { upsertAccountCenter } from './account-center-queries.ts';
import { accountCenterSchema, updateAccountCenterBody } from './account-center-schemas.ts';

const tag = 'Account center';

/** Logto's account center settings: whether the Account API is open, and what each field allows. */
export function accountCenterRoutes(api: Api): void {
  api.add(
    {
      method: 'get',
      path: '/account-center',
      summary: 'The account center settings',
      tag,
      response: accountCenterSchema,
    },
    async (_input, _ctx, trx) => currentAccountCenter(trx),
  );

  api.add(
    {
      method: 'patch',
      path: '/account-center',
      summary: 'Change the account center settings',
      tag,
      body: updateAccountCenterBody,
      response: accountCenterSchema,
    },
    async ({ body }, _ctx, trx) => {
      const { enabled, fields } = await currentAccountCenter(trx);
      await upsertAccountCenter(trx, { enabled: body.enabled ?? enabled, fields: body.fields ?? fields });
      return currentAccountCenter(trx);
    },
  );
}
