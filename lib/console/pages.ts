import type Koa from 'koa';

import { packageFolder } from '../config/package-folder.ts';
import type { ServiceContext } from '../http/context.ts';
import { pageHeaders } from '../http/pages/page-headers.ts';
import { loadViteBuild, sendAsset } from '../http/pages/vite-build.ts';
import { brandingImageOrigins } from '../sign-in-experience/image-origins.ts';
import { currentSignInExperience } from '../sign-in-experience/sign-in-experience.ts';
import { emailPreview, emailPreviewPath } from './email-preview.ts';

/** Where Vite writes the console (`npm run build`, which `npm start` runs when the sources changed). */
const distFolder = new URL('console/dist/', packageFolder);
const prefix = '/console';

/**
 * The admin console at /console: the built single-page application, read once at start. Assets
 * carry a content hash in their names, so they are cached for good; every other path under
 * /console is a client route and gets the application's page (the SPA fallback). The one other
 * method: the email templates page's preview frame (`email-preview.ts`).
 */
export function consolePages({ db, cache }: Pick<ServiceContext, 'db' | 'cache'>): Koa.Middleware {
  const build = loadViteBuild(distFolder, `${prefix}/`);
  return async (ctx, next) => {
    if (ctx.method === 'POST' && ctx.path === emailPreviewPath) {
      await emailPreview(ctx);
      return;
    }
    if (
      (ctx.method !== 'GET' && ctx.method !== 'HEAD') ||
      (ctx.path !== prefix && !ctx.path.startsWith(`${prefix}/`))
    ) {
      await next();
      return;
    }
    ctx.set('X-Content-Type-Options', 'nosniff');
    if (!build) {
      ctx.status = 503;
      ctx.type = 'text/plain; charset=utf-8';
      ctx.body = 'The console is not built: run `npm run build` (npm start does it).';
      return;
    }
    if (ctx.path.startsWith(`${prefix}/assets/`)) {
      sendAsset(ctx, build.assets.get(ctx.path));
      return;
    }
    // Its icon, /favicon.ico, may redirect to the sign-in experience's favicon, and its pages show the logos.
    ctx.set(pageHeaders({ images: brandingImageOrigins(await currentSignInExperience(db, cache)) }));
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = build.index;
  };
}
