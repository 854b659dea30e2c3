import { currentAccountCenter } from '../sign-in-experience/account-center/account-center.ts';
import { readSignInExperience } from '../sign-in-experience/sign-in-experience.ts';
import type { Queryable } from '../storage/database.ts';
import { type ConfigFile, formatVersion } from './file.ts';
import type { ExportOptions, ListName } from './kind.ts';
import { kinds } from './kinds/all.ts';

/**
 * The configuration held in the database, as the file stores it: each kind's list (kinds/), in
 * creation order, JSON settings as stored, without timestamps that move (only `createdAt`), so that
 * exporting twice, or after an import into an empty database, gives the same bytes.
 */
export async function exportConfiguration(db: Queryable, options: ExportOptions): Promise<ConfigFile> {
  const lists: Partial<Record<ListName, unknown[]>> = {};
  for (const kind of kinds) {
    lists[kind.list] = await kind.exported(db, options);
  }
  const { enabled, fields } = await currentAccountCenter(db);
  return {
    version: formatVersion,
    ...lists,
    accountCenter: { enabled, fields },
    signInExperience: await readSignInExperience(db),
  } as ConfigFile;
}
