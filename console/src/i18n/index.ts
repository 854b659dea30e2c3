import { useEffect, useState } from 'preact/hooks';

import { type PhraseKey, translator } from '../../../lib/shared/phrases/translate.ts';
import { de } from './de.ts';
import { type ConsoleCatalogue, en } from './en.ts';
import { es } from './es.ts';
import { fr } from './fr.ts';
import { ja } from './ja.ts';
import { zhCN } from './zh-CN.ts';

/**
 * The console's language and texts. Every catalogue is in the bundle (a few kilobytes each), so a
 * switch is immediate: components read `t` while they render, and the application re-renders.
 */

/** The languages the console speaks, each named in itself (as a language switcher names them). */
export const languages = {
  en: 'English',
  de: 'Deutsch',
  fr: 'Français',
  es: 'Español',
  ja: '日本語',
  'zh-CN': '简体中文',
} as const;
export type Language = keyof typeof languages;

const catalogues: Record<Language, ConsoleCatalogue> = { en, de, fr, es, ja, 'zh-CN': zhCN };
const isLanguage = (value: string | null): value is Language => value !== null && Object.hasOwn(catalogues, value);

/**
 * The first of the browser's languages the console speaks, by primary language (`de-AT` is `de`);
 * Chinese only in the Simplified script (`zh`, `zh-Hans`, `zh-SG` are; `zh-TW`, `zh-Hant` are not).
 */
export function matchLanguage(preferred: readonly string[]): Language | undefined {
  for (const tag of preferred) {
    let locale: Intl.Locale;
    try {
      locale = new Intl.Locale(tag).maximize();
    } catch {
      continue;
    }
    if (locale.language === 'zh') {
      if (locale.script === 'Hans') {
        return 'zh-CN';
      }
    } else if (isLanguage(locale.language)) {
      return locale.language;
    }
  }
  return undefined;
}

const storageKey = 'console.language';

/** The person's choice in the switcher, else the browser's languages, else English. */
const initial = (): Language => {
  const stored = localStorage.getItem(storageKey);
  return isLanguage(stored) ? stored : (matchLanguage(navigator.languages) ?? 'en');
};

let language = initial();
let translate = translator(language, catalogues[language]);
const listeners = new Set<() => void>();

/** Marks the page as in `language` (screen readers, fonts, hyphenation) and names its tab. */
const markPage = () => {
  document.documentElement.lang = language;
  document.title = t('shell.title');
};

/** The text of a key in the console's language; `{{name}}` filled from `values`, plurals by `count`. */
export const t = (key: PhraseKey<ConsoleCatalogue>, values?: Record<string, unknown>) => translate(key, values);

export const currentLanguage = () => language;

/** Switches the console's language, remembered in this browser. */
export function setLanguage(next: Language): void {
  language = next;
  translate = translator(next, catalogues[next]);
  localStorage.setItem(storageKey, next);
  markPage();
  listeners.forEach((listener) => listener());
}

/** The language, re-rendering the caller (the application's root: the whole console) when it changes. */
export function useLanguage(): Language {
  const [value, setValue] = useState(language);
  useEffect(() => {
    const update = () => setValue(language);
    listeners.add(update);
    return () => {
      listeners.delete(update);
    };
  }, []);
  return value;
}

markPage();
