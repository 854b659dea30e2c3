import type { Queryable } from '../storage/database.ts';
import { jsonColumn } from '../storage/json-column.ts';
import { type SignInExperience, signInExperienceSchema } from './schemas.ts';

/** One row, `default`. */
const id = 'default';

/** As the settings routes write them; settings saved by an older version may lack newer fields. */
const settingsOf = jsonColumn('sign_in_experience', 'settings', signInExperienceSchema.partial());

export async function findSettings(db: Queryable): Promise<Partial<SignInExperience> | undefined> {
  const row = await db('sign_in_experience').where({ id }).first<{ settings: string } | undefined>();
  return row && settingsOf(row.settings);
}

export async function upsertSettings(db: Queryable, settings: SignInExperience): Promise<void> {
  await db('sign_in_experience')
    .insert({ id, settings: JSON.stringify(settings) })
    .onConflict('id')
    .merge();
}
