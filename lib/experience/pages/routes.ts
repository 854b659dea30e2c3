import type Koa from 'koa';

import { packageFolder } from '../../config/package-folder.ts';
import { signInPageHeaders } from '../../http/page-headers.ts';
import { loadViteBuild, sendAsset } from '../../http/vite-build.ts';
import { currentSignInExperience } from '../../sign-in-experience/sign-in-experience.ts';
import { iconLinks } from './favicon.ts';
import type { ExperienceContext } from '../context.ts';
import { pageIn, pageLanguage } from './page-language.ts';

/** Where Vite writes the pages (`npm run build`, which `npm start` runs when the sources changed). */
const distFolder = new URL('sign-in/dist/', packageFolder);

/** Where the pages' script and stylesheet are served (the build's `base`). */
const assetPrefix = '/experience-assets/';

/** The sign-in page for ENDPOINT (where /oidc/auth sends a browser to sign in). */
export const signInUrl = (endpoint: string) => `${endpoint}/sign-in`;

/**
 * The pages, one application: /sign-in, /register, /reset-password and /consent (where /oidc/auth
 * sends the browser), and /callback/<connector id> and /callback/sso/<connector id>, where IdPs send it back.
 */
const isPage = (path: string) =>
  ['/sign-in', '/register', '/reset-password', '/consent', '/callback'].includes(path) ||
  /^\/callback\/(sso\/)?[\w-]{1,21}$/.test(path);

/**
 * The hosted sign-in pages (sign-in/, a Preact application that drives /api/experience from the
 * browser) and their assets under /experience-assets/, read once, here; anything else goes to `next`.
 * Each page is sent in the request's language, its texts with it (page-language.ts), and names
 * the sign-in experience's favicon.
 */
export function pageRoutes(context: Pick<ExperienceContext, 'db' | 'cache' | 'oidc'>): Koa.Middleware {
  const build = loadViteBuild(distFolder, assetPrefix);
  return async (ctx, next) => {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
      await next();
      return;
    }
    if (ctx.path.startsWith(assetPrefix)) {
      sendAsset(ctx, build?.assets.get(ctx.path));
      return;
    }
    if (!isPage(ctx.path)) {
      await next();
      return;
    }
    if (!build) {
      ctx.status = 503;
      ctx.type = 'text/plain; charset=utf-8';
      ctx.body = 'The sign-in pages are not built: run `npm run build` (npm start does it).';
      return;
    }
    ctx.set(signInPageHeaders);
    ctx.type = 'text/html; charset=utf-8';
    const page = build.index.replace(
      '<link rel="icon" href="data:," />',
      iconLinks(await currentSignInExperience(context.db, context.cache)),
    );
    ctx.body = pageIn(page, await pageLanguage(ctx, context));
  };
}
