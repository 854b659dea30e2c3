import type { Queryable } from '../storage/database.ts';
import { firstAdministratorAt, setFirstAdministratorAt } from './queries.ts';
import { deleteSetupTokens } from './setup-token-queries.ts';

/**
 * The marker that an administrator once existed (`console_first_run`), which closes the console's
 * first run for good in production. Below roles/, which set it whenever the administrator role is
 * given, and console/, which reads it.
 */

/** Whether an administrator ever existed, however it was made (first run, CLI, management API). */
export async function administratorEverExisted(db: Queryable): Promise<boolean> {
  return (await firstAdministratorAt(db)) !== null;
}

/** Called whenever a user is given the administrator role: the first run is over, its tokens void. */
export async function noteAdministrator(db: Queryable): Promise<void> {
  await setFirstAdministratorAt(db, Date.now());
  await deleteSetupTokens(db);
}
