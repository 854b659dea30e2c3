import type Koa from 'koa';

import { logQuietly } from '../../http/logger.ts';

/** Where the sign-out confirmation's script is served (a file: the pages' CSP runs nothing inline). */
export const signOutScriptPath = '/oidc-pages/sign-out.js';

/** Presses the confirmation's "Sign out": the form carries the provider's CSRF token. */
const script = `document.querySelector('button[name="logout"]')?.click();\n`;

/**
 * The script a sign-out confirmation names when the application proved which sign-in it ends
 * (a valid `id_token_hint`, logout-pages.ts): the sign-out then takes the person's one click in the
 * application. Without JavaScript the page is the confirmation it always was.
 */
export function signOutScript(): Koa.Middleware {
  return async (ctx, next) => {
    if (ctx.path !== signOutScriptPath || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) {
      await next();
      return;
    }
    logQuietly(ctx);
    ctx.set({ 'Cache-Control': 'public, max-age=86400', 'X-Content-Type-Options': 'nosniff' });
    ctx.type = 'text/javascript; charset=utf-8';
    ctx.body = script;
  };
}
