import { type Catalogue, catalogueFor, catalogues, matchLanguage } from '../shared/phrases/index.ts';
import type { SignInExperience } from '../sign-in-experience/schemas.ts';
import { currentSignInExperience } from '../sign-in-experience/sign-in-experience.ts';
import type { Queryable } from '../storage/database.ts';
import type { SharedCache } from '../storage/shared-cache.ts';
import { listCustomPhrases } from './queries.ts';
import type { CustomPhrase } from './schemas.ts';

/** Read once per change: every page and email looks them up. */
export const cachedCustomPhrases = (db: Queryable, cache: SharedCache) =>
  cache.get('settings', 'custom-phrases', () => listCustomPhrases(db));

/** Accept-Language's tags, most wanted first (`de-CH, de;q=0.9, en;q=0.5`); `*` and q=0 left out. */
export function acceptedLanguages(header: string | undefined): string[] {
  return (header ?? '')
    .split(',')
    .slice(0, 20)
    .map((part, index) => {
      const [tag = '', ...parameters] = part.trim().split(';');
      const q = parameters.map((parameter) => /^\s*q=([\d.]+)\s*$/.exec(parameter)?.[1]).find(Boolean);
      return { tag: tag.trim(), q: q === undefined ? 1 : Number(q), index };
    })
    .filter(({ tag, q }) => tag !== '' && tag !== '*' && q > 0)
    .sort((a, b) => b.q - a.q || a.index - b.index)
    .map(({ tag }) => tag);
}

export type LanguageRequest = {
  /** The authorization request's `ui_locales` (space-separated, most wanted first), when there is one. */
  uiLocales?: string;
  acceptLanguage?: string;
};

/**
 * The language a page or email is in: the first of the application's `ui_locales` we have, then
 * (with `languageInfo.autoDetect`) the browser's Accept-Language, then `languageInfo.fallbackLanguage`,
 * then English. "We have" a language when it ships complete or the operator gave it custom phrases.
 */
export function chooseLanguage(
  { uiLocales, acceptLanguage }: LanguageRequest,
  { languageInfo }: Pick<SignInExperience, 'languageInfo'>,
  custom: CustomPhrase[],
): string {
  const available = [...Object.keys(catalogues), ...custom.map(({ languageTag }) => languageTag)];
  const wanted = [
    ...(uiLocales ?? '').split(' ').filter(Boolean).slice(0, 10),
    ...(languageInfo.autoDetect ? acceptedLanguages(acceptLanguage) : []),
    languageInfo.fallbackLanguage,
  ];
  for (const tag of wanted) {
    const found = matchLanguage(tag, available);
    if (found) {
      return found;
    }
  }
  return 'en';
}

/** The chosen language's catalogue, the operator's custom phrases for it applied. */
export function phrasesIn(language: string, custom: CustomPhrase[]): Catalogue {
  return catalogueFor(language, custom.find(({ languageTag }) => languageTag === language)?.translation);
}

export type Language = { language: string; catalogue: Catalogue };

/** The language a request's page or email is in (`chooseLanguage` with the current settings), and its texts. */
export async function languageFor(db: Queryable, cache: SharedCache, request: LanguageRequest): Promise<Language> {
  const [settings, custom] = await Promise.all([currentSignInExperience(db, cache), cachedCustomPhrases(db, cache)]);
  const language = chooseLanguage(request, settings, custom);
  return { language, catalogue: phrasesIn(language, custom) };
}
