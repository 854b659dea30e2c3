import type { Queryable } from '../storage/database.ts';

/**
 * The marker that an administrator once existed (`console_first_run`), which closes the console's
 * first run for good in production. Below roles/, which set it whenever the administrator role is
 * given, and console/, which reads it.
 */

/** Whether an administrator ever existed, however it was made (first run, CLI, management API). */
export async function administratorEverExisted(db: Queryable): Promise<boolean> {
  const row = await db('console_first_run')
    .where({ id: 1 })
    .first<{ first_administrator_at: number | null } | undefined>('first_administrator_at');
  return row?.first_administrator_at != null;
}

/** Called whenever a user is given the administrator role: the first run is over, its tokens void. */
export async function noteAdministrator(db: Queryable): Promise<void> {
  await db('console_first_run')
    .where({ id: 1 })
    .whereNull('first_administrator_at')
    .update({ first_administrator_at: Date.now() });
  await db('console_setup_tokens').delete();
}
