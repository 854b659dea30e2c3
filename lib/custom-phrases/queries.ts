import { tenantId } from '../shared/tenant.ts';
import type { Queryable } from '../storage/database.ts';
import { generateId } from '../storage/ids.ts';
import { jsonColumn } from '../storage/json-column.ts';
import { type CustomPhrase, translationSchema } from './schemas.ts';

/* `custom_phrases`: the operator's texts, one row per language tag. */

type CustomPhraseRow = { id: string; language_tag: string; translation: string };

const translationOf = jsonColumn('custom_phrases', 'translation', translationSchema);

const toCustomPhrase = (row: CustomPhraseRow): CustomPhrase => ({
  tenantId,
  id: row.id,
  languageTag: row.language_tag,
  translation: translationOf(row.translation),
});

export async function listCustomPhrases(db: Queryable): Promise<CustomPhrase[]> {
  const rows = await db('custom_phrases').orderBy('language_tag').select<CustomPhraseRow[]>();
  return rows.map(toCustomPhrase);
}

export async function findCustomPhrase(db: Queryable, languageTag: string): Promise<CustomPhrase | undefined> {
  const row = await db('custom_phrases').where({ language_tag: languageTag }).first<CustomPhraseRow | undefined>();
  return row && toCustomPhrase(row);
}

/** Replaces the language's phrases (keeping its id), or adds them. */
export async function upsertCustomPhrase(
  db: Queryable,
  languageTag: string,
  translation: CustomPhrase['translation'],
): Promise<CustomPhrase> {
  await db('custom_phrases')
    .insert({ id: generateId(), language_tag: languageTag, translation: JSON.stringify(translation) })
    .onConflict('language_tag')
    .merge(['translation']);
  const saved = await findCustomPhrase(db, languageTag);
  if (!saved) {
    throw new Error('custom_phrases: the row just written is missing');
  }
  return saved;
}

export async function deleteCustomPhrase(db: Queryable, languageTag: string): Promise<boolean> {
  return (await db('custom_phrases').where({ language_tag: languageTag }).delete()) > 0;
}
