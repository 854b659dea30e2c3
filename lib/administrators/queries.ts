import type { Queryable } from '../storage/database.ts';

/*
 * `console_first_run` (one row, id 1): when the first administrator came to be. Below roles/,
 * which note an administrator, and console/, which runs the first run.
 */

export async function firstAdministratorAt(db: Queryable): Promise<number | null> {
  const row = await db('console_first_run')
    .where({ id: 1 })
    .first<{ first_administrator_at: number | null } | undefined>('first_administrator_at');
  return row?.first_administrator_at ?? null;
}

/** Sets the time once; later calls leave it. */
export async function setFirstAdministratorAt(db: Queryable, at: number): Promise<void> {
  await db('console_first_run')
    .where({ id: 1 })
    .whereNull('first_administrator_at')
    .update({ first_administrator_at: at });
}
