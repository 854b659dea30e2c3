import i18next from 'i18next';

import type { Catalogue } from './en.ts';

/*
 * Filling in a catalogue's texts, apart from the catalogues themselves (index.ts): the hosted pages'
 * bundle takes this and the one catalogue its page is sent with, not every language. The console's
 * catalogue (console/src/i18n/) is another shape, so the shape is a parameter (the hosted pages' by default).
 */

/** A phrase's key, dotted (`signIn.submit`); plural forms by their base key (`passwordIssues.tooShort`). */
type Paths<T> = {
  [K in keyof T & string]: T[K] extends string
    ? K extends `${infer Base}_${'one' | 'other'}`
      ? Base
      : K
    : `${K}.${Paths<T[K]>}`;
}[keyof T & string];
export type PhraseKey<Shape = Catalogue> = Paths<Shape>;

export type Translate<Shape = Catalogue> = ((key: PhraseKey<Shape>, values?: Record<string, unknown>) => string) & {
  /** The text of a key known only when the page runs (an API error's code), if the catalogue has it. */
  optional(key: string): string | undefined;
};

/**
 * A catalogue's texts by key, filled in (i18next: `{{name}}` and plural forms by `count`). Texts
 * are plain: HTML escaping is the caller's, as for any other text it places.
 */
export function translator<Shape extends Record<string, unknown> = Catalogue>(
  language: string,
  catalogue: Shape,
): Translate<Shape> {
  const instance = i18next.createInstance();
  void instance.init({
    lng: language,
    resources: { [language]: { translation: catalogue } },
    initAsync: false,
    interpolation: { escapeValue: false },
    showSupportNotice: false,
  });
  const translate = (key: PhraseKey<Shape>, values?: Record<string, unknown>) => instance.t(key, values ?? {});
  return Object.assign(translate, {
    optional: (key: string) => {
      const text: unknown = instance.t(key, { returnObjects: true, defaultValue: '' });
      return typeof text === 'string' && text !== '' ? text : undefined;
    },
  });
}

/** A list in the language's words: "a and b", "a or b". */
export const listOf = (language: string, items: string[], type: 'conjunction' | 'disjunction') =>
  new Intl.ListFormat(language, { type }).format(items);
