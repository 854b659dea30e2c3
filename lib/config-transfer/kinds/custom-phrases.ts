import { json, type Kind } from '../kind.ts';
import { rowsOf, upsert } from '../queries.ts';

/** An operator's custom phrases, by language. */
export const customPhrases: Kind<'customPhrases'> = {
  list: 'customPhrases',

  async exported(db) {
    return (await rowsOf(db, 'custom_phrases', 'language_tag')).map((row) => ({
      id: String(row.id),
      languageTag: String(row.language_tag),
      translation: json(row.translation),
    }));
  },

  async imported(trx, entries, progress) {
    for (const phrase of entries) {
      await upsert(
        trx,
        'custom_phrases',
        { id: phrase.id, language_tag: phrase.languageTag, translation: JSON.stringify(phrase.translation) },
        progress,
      );
    }
  },
};
