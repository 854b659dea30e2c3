import { de } from './de.ts';
import { type Catalogue, en } from './en.ts';
import { es } from './es.ts';
import { fr } from './fr.ts';
import { ja } from './ja.ts';
import { matchLanguage } from './language-tags.ts';
import { zhCN } from './zh-cn.ts';

export type { Catalogue } from './en.ts';
export { matchLanguage } from './language-tags.ts';
export { listOf, translator, type PhraseKey, type Translate } from './translate.ts';

/** The languages the service ships complete, by tag; an operator's custom phrases may add others. */
export const catalogues: Record<string, Catalogue> = { en, de, fr, es, ja, 'zh-CN': zhCN };

/** Part of a catalogue, as an operator's custom phrases hold it (Logto's `TranslationObject`). */
export type Translation = { [key: string]: string | Translation };

const isTranslation = (value: unknown): value is Translation =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** `base` with `over`'s strings in place of its own, where `base` has that key. */
function overlay(base: Translation, over: Translation | undefined): Translation {
  const result: Translation = { ...base };
  for (const [key, value] of Object.entries(over ?? {})) {
    const current = base[key];
    if (typeof current === 'string' && typeof value === 'string') {
      result[key] = value;
    } else if (isTranslation(current) && isTranslation(value)) {
      result[key] = overlay(current, value);
    }
  }
  return result;
}

/**
 * What a page or email in `language` says: English, under the shipped catalogue that serves the
 * language (`de` for `de-AT`, `zh-CN` for `zh-SG`: matchLanguage), under the operator's custom
 * phrases for it. Complete whatever the custom phrases leave out, so that no key ever shows.
 */
export function catalogueFor(language: string, custom?: Translation): Catalogue {
  const shipped = matchLanguage(language, Object.keys(catalogues));
  return overlay(overlay(en, shipped === undefined ? undefined : catalogues[shipped]), custom) as Catalogue;
}

/** The keys a translation names that no catalogue has (custom phrases may only change known texts). */
export function unknownKeys(translation: Translation, reference: Translation = en, prefix = ''): string[] {
  return Object.entries(translation).flatMap(([key, value]) => {
    const known = reference[key];
    const path = `${prefix}${key}`;
    if (typeof value === 'string') {
      return typeof known === 'string' ? [] : [path];
    }
    return isTranslation(known) ? unknownKeys(value, known, `${path}.`) : [path];
  });
}
