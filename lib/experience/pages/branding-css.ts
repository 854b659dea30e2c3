import type Koa from 'koa';

import type { ServiceContext } from '../../http/context.ts';
import { logQuietly } from '../../http/logger.ts';
import type { SignInExperience } from '../../sign-in-experience/schemas.ts';
import { currentSignInExperience } from '../../sign-in-experience/sign-in-experience.ts';

/** Where the hosted pages load the sign-in experience's colours and custom CSS from (sign-in/src/branding.ts). */
export const brandingCssPath = '/sign-in-branding.css';

/**
 * The pages' colours as CSS custom properties (the colours are `#rrggbb`, checked when saved), the
 * dark palette when dark mode is on, then the operator's `customCss`. A stylesheet of its own rather
 * than a `<style>` in the page: the pages' CSP allows no inline style, and operator CSS served as
 * text/css (with nosniff) has no HTML to break out of; the CSP still keeps it from loading anything
 * but images from elsewhere.
 */
export function brandingCss({ color, customCss }: Pick<SignInExperience, 'color' | 'customCss'>): string {
  const palette = [
    ':root {',
    `  --accent: ${color.primaryColor};`,
    `  --accent-dark: color-mix(in srgb, ${color.primaryColor} 75%, #000);`,
    '}',
  ];
  const dark = color.isDarkModeEnabled
    ? [
        '@media (prefers-color-scheme: dark) {',
        '  :root {',
        `    --accent: ${color.darkPrimaryColor};`,
        `    --accent-dark: color-mix(in srgb, ${color.darkPrimaryColor} 75%, #fff);`,
        '    --text: #e6e9ee;',
        '    --muted: #aab2bd;',
        '    --line: #5b6470;',
        '    --page: #14171c;',
        '    --card: #1e232a;',
        '    --error-bg: #3b1d1b;',
        '    --error: #ffb4ab;',
        '    --success-bg: #17301a;',
        '    --success: #a5d6a7;',
        '    color-scheme: dark;',
        '  }',
        '  .card { border-color: var(--line); }',
        '  .secondary { background: var(--card); }',
        '  .secondary:hover { background: #2a3038; }',
        '  .primary { color: #0b0d10; }',
        '}',
      ]
    : [];
  return [...palette, ...dark, ...(customCss ? ['/* customCss */', customCss] : []), ''].join('\n');
}

/** Serves the branding stylesheet, public (it is what every visitor's page shows), never cached. */
export function brandingStylesheet({ db, cache }: Pick<ServiceContext, 'db' | 'cache'>): Koa.Middleware {
  return async (ctx, next) => {
    if (ctx.path !== brandingCssPath || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) {
      await next();
      return;
    }
    logQuietly(ctx);
    ctx.set({ 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff' });
    ctx.type = 'text/css; charset=utf-8';
    ctx.body = brandingCss(await currentSignInExperience(db, cache));
  };
}
