import type { Queryable } from '../../storage/database.ts';
import { jsonColumn } from '../../storage/json-column.ts';
import { type AccountCenter, accountCenterSchema } from './account-center-schemas.ts';

/* `account_center`: one row, `default`, Logto's account center settings. */

const id = 'default';
const settingsOf = jsonColumn('account_center', 'settings', accountCenterSchema.pick({ enabled: true, fields: true }));

export async function findAccountCenter(db: Queryable): Promise<Pick<AccountCenter, 'enabled' | 'fields'> | undefined> {
  const row = await db('account_center').where({ id }).first<{ settings: string } | undefined>();
  return row && settingsOf(row.settings);
}

export async function upsertAccountCenter(db: Queryable, settings: Pick<AccountCenter, 'enabled' | 'fields'>) {
  await db('account_center')
    .insert({ id, settings: JSON.stringify(settings) })
    .onConflict('id')
    .merge();
}
