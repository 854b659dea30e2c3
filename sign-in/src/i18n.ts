import { type Catalogue, en } from '../../lib/shared/phrases/en.ts';
import { listOf, translator } from '../../lib/shared/phrases/translate.ts';

/**
 * The page's language and texts, as the service sent them with the page (a JSON data block it
 * fills from the sign-in's `ui_locales`, Accept-Language and the operator's custom phrases);
 * English when it is absent (Vite's dev server).
 */
const sent = document.getElementById('phrases')?.textContent;
const { language, catalogue } = sent
  ? (JSON.parse(sent) as { language: string; catalogue: Catalogue })
  : { language: 'en', catalogue: en };

export { language };
export const t = translator(language, catalogue);
/** "a and b" in the page's language. */
export const all = (items: string[]) => listOf(language, items, 'conjunction');
/** "a or b" in the page's language. */
export const either = (items: string[]) => listOf(language, items, 'disjunction');
