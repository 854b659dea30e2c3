import { existsSync, readFileSync } from 'node:fs';
import type { Context } from 'koa';

import { packageFolder } from '../../config/package-folder.ts';
import { type Language, languageFor } from '../../custom-phrases/languages.ts';
import { pageHeaders } from '../../http/pages/page-headers.ts';
import { catalogueFor, type Translate, translator } from '../../shared/phrases/index.ts';
import { brandingImageOrigins } from '../../sign-in-experience/image-origins.ts';
import { currentSignInExperience } from '../../sign-in-experience/sign-in-experience.ts';
import type { Queryable } from '../../storage/database.ts';
import type { SharedCache } from '../../storage/shared-cache.ts';

/**
 * The provider's own pages (its error page, the sign-out confirmation) in the hosted sign-in pages'
 * look: server-rendered HTML with the sign-in pages' built stylesheet, nothing inline, under the
 * same headers (page-headers.ts), so that they read as part of one sign-in service: their icon,
 * /favicon.ico, may redirect to the sign-in experience's favicon elsewhere (`brandImages`).
 */

/** Text from a request, a client's registration or the provider, made safe to place in HTML. */
export function escapeHtml(text: string): string {
  return text
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&#39;');
}

/** The sign-in build's page names its stylesheet (its name carries a content hash); the sign-in pages' routes serve it. */
const signInIndex = new URL('sign-in/dist/index.html', packageFolder);
let stylesheet: { href: string | undefined } | undefined;

function stylesheetHref(): string | undefined {
  if (!stylesheet) {
    const index = existsSync(signInIndex) ? readFileSync(signInIndex, 'utf8') : '';
    stylesheet = { href: /<link rel="stylesheet"[^>]* href="(\/experience-assets\/[\w.-]+\.css)"/.exec(index)?.[1] };
  }
  return stylesheet.href;
}

/**
 * The page's language, as the hosted pages choose it (the request's `ui_locales`, Accept-Language,
 * the fallback language), and its texts. English when the settings cannot be read: the page may be
 * telling of the database being down.
 */
export async function providerPageLanguage(
  db: Queryable,
  cache: SharedCache,
  ctx: Context & { oidc?: { params?: Record<string, unknown> } },
): Promise<Language & { t: Translate }> {
  const uiLocales = ctx.oidc?.params?.ui_locales;
  const found = await languageFor(db, cache, {
    uiLocales: typeof uiLocales === 'string' ? uiLocales : undefined,
    acceptLanguage: ctx.get('accept-language'),
  }).catch(() => ({ language: 'en', catalogue: catalogueFor('en') }));
  return { ...found, t: translator(found.language, found.catalogue) };
}

/**
 * The origins of the sign-in experience's images, which a provider page's icon may redirect to;
 * none when the settings cannot be read (the page may be telling of the database being down).
 */
export const brandImages = (db: Queryable, cache: SharedCache): Promise<string[]> =>
  currentSignInExperience(db, cache).then(brandingImageOrigins, () => []);

export type Page = {
  /** The page's language tag (`<html lang>`). */
  language: string;
  /** The tab's title, and the page's heading. */
  title: string;
  /** HTML already escaped: the card's content under the heading. */
  body: string;
  /** Origins a form on the page may end up at (CSP `form-action` applies to a submission's redirects too). */
  formTargets?: string[];
  /** Origins the page may load images from (`brandImages`). */
  images: string[];
  /** A script of the service's own the page runs (a path: nothing runs inline). */
  script?: string;
};

/**
 * Sends `page` as the response body (the caller sets the status). Without the sign-in build the page
 * is unstyled but whole.
 */
export function sendPage(ctx: Context, { language, title, body, formTargets = [], images, script }: Page): void {
  const href = stylesheetHref();
  ctx.set(pageHeaders({ images, formTargets }));
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = `<!doctype html>
<html lang="${escapeHtml(language)}">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>${escapeHtml(title)}</title>
    <link rel="icon" href="/favicon.ico" />
${href ? `    <link rel="stylesheet" href="${href}" />\n` : ''}${script ? `    <script src="${escapeHtml(script)}" defer></script>\n` : ''}  </head>
  <body>
    <main class="card">
      <h1>${escapeHtml(title)}</h1>
${body}
    </main>
  </body>
</html>
`;
}

/**
 * Where a link back to an application may safely point: the origin of its first registered http(s)
 * redirect URI, which its administrator registered (never an address taken from the request).
 */
export function applicationHome(redirectUris: readonly string[] | undefined): string | undefined {
  for (const uri of redirectUris ?? []) {
    if (URL.canParse(uri)) {
      const url = new URL(uri);
      if (url.protocol === 'https:' || url.protocol === 'http:') {
        return `${url.origin}/`;
      }
    }
  }
  return undefined;
}

/**
 * The CSP source for where a form's redirect lands: an http(s) URI's origin, a private-use scheme
 * (a native application's `com.example.app:/…`) as its scheme.
 */
export function formTargetOf(uri: string): string | undefined {
  if (!URL.canParse(uri)) {
    return undefined;
  }
  const url = new URL(uri);
  if (url.protocol === 'https:' || url.protocol === 'http:') {
    return url.origin;
  }
  return /^[a-z][a-z\d+.-]*:$/i.test(url.protocol) ? url.protocol : undefined;
}
