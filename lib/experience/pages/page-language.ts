import type { Context } from 'koa';

import { type Language, languageFor } from '../../custom-phrases/languages.ts';
import type { ExperienceContext } from '../context.ts';

export type PageLanguage = Language;

/** The authorization request's parameters, when the browser is in a sign-in (the `_interaction` cookie). */
export async function signInParams(
  ctx: Context,
  oidc: ExperienceContext['oidc'],
): Promise<Record<string, unknown> | undefined> {
  try {
    const provider = await oidc.provider();
    return (await provider.interactionDetails(ctx.req, ctx.res)).params;
  } catch {
    // No sign-in under way (an expired one, an IdP's callback in another browser): the browser's languages decide.
    return undefined;
  }
}

/**
 * The language of a hosted page: the sign-in's `ui_locales` (from `signInParams`), the browser's
 * Accept-Language, the sign-in experience's fallback (languages.ts).
 */
export async function pageLanguage(
  ctx: Context,
  context: Pick<ExperienceContext, 'db' | 'cache'>,
  params: Record<string, unknown> | undefined,
): Promise<PageLanguage> {
  return requestLanguage(ctx, context, typeof params?.ui_locales === 'string' ? params.ui_locales : undefined);
}

/** As `pageLanguage`, for a request that has the sign-in's `ui_locales` at hand (an Experience API call). */
export async function requestLanguage(
  ctx: Context,
  { db, cache }: Pick<ExperienceContext, 'db' | 'cache'>,
  uiLocales: string | undefined,
): Promise<PageLanguage> {
  return languageFor(db, cache, { uiLocales, acceptLanguage: ctx.get('accept-language') });
}

/** JSON inside a <script> data block: nothing in it can close the element. */
const scriptJson = (value: unknown) => JSON.stringify(value).replaceAll('<', '\\u003c');

/**
 * The built page in a language: `<html lang>`, and the catalogue as a JSON data block the pages'
 * script reads (a data block is not run, so the CSP's script-src does not apply to it). What goes in
 * is given by functions, never as a replacement string: an operator's phrase may hold `$&`, `` $` ``,
 * `$'` or `$1`, which a replacement string would expand into parts of the page.
 */
export function pageIn(index: string, { language, catalogue }: PageLanguage): string {
  const catalogueBlock = `  <script type="application/json" id="phrases">${scriptJson({ language, catalogue })}</script>\n  </head>`;
  return index
    .replace('<html lang="en">', () => `<html lang="${language.replace(/[^\w-]/g, '')}">`)
    .replace('</head>', () => catalogueBlock)
    .replace(/<noscript>[\s\S]*?<\/noscript>/, (noscript) =>
      noscript.replace(
        /(<p class="notice">)[^<]*(<\/p>)/,
        (_, open: string, close: string) => `${open}${escapeText(catalogue.page.noScript)}${close}`,
      ),
    );
}

const escapeText = (text: string) => text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
