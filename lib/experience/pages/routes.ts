import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

import type Koa from 'koa';

import { pageHeaders } from '../../http/page-headers.ts';

/** Where the pages' stylesheet and script are served; the HTML names them under this prefix. */
export const assetPrefix = '/experience-assets/';

const pageFiles: Record<string, string> = {
  '/sign-in': 'sign-in.html',
  '/register': 'register.html',
  '/reset-password': 'reset-password.html',
  '/callback': 'callback.html',
};

/** Where IdPs send the browser back: `/callback/<connector id>` (social) and `/callback/sso/<connector id>`. */
const pagePath = (path: string) => (/^\/callback\/(sso\/)?[\w-]{1,21}$/.test(path) ? '/callback' : path);

const assetTypes: Record<string, string> = {
  css: 'text/css; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
};

type Asset = { body: Buffer; type: string; etag: string; version: string };

function loadAssets(folder: URL): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  for (const name of ['experience.css', 'experience.js']) {
    const body = readFileSync(new URL(`assets/${name}`, folder));
    const hash = createHash('sha256').update(body).digest('base64url');
    const extension = name.slice(name.lastIndexOf('.') + 1);
    assets.set(name, { body, type: assetTypes[extension]!, etag: `"${hash.slice(0, 27)}"`, version: hash.slice(0, 12) });
  }
  return assets;
}

/** The page's HTML with each asset URL carrying its content version (`?v=`), so assets can be cached for good. */
function loadPage(folder: URL, file: string, assets: Map<string, Asset>): string {
  const html = readFileSync(new URL(file, folder), 'utf8');
  return html.replaceAll(/\/experience-assets\/([\w.-]+)/g, (url, name: string) => {
    const asset = assets.get(name);
    if (!asset) {
      throw new Error(`${file} names an unknown asset ${name}`);
    }
    return `${url}?v=${asset.version}`;
  });
}

/**
 * The hosted sign-in pages: GET /sign-in, /register and /reset-password (where /oidc/auth sends the
 * browser) and their assets under /experience-assets/. The pages drive /api/experience from the
 * browser. Files are read once, here; anything else goes to `next`.
 */
export function pageRoutes(): Koa.Middleware {
  const folder = new URL('./', import.meta.url);
  const assets = loadAssets(folder);
  const pages = new Map(Object.entries(pageFiles).map(([path, file]) => [path, loadPage(folder, file, assets)]));

  return async (ctx, next) => {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
      return next();
    }
    const page = pages.get(pagePath(ctx.path));
    if (page !== undefined) {
      ctx.set(pageHeaders);
      ctx.type = 'text/html; charset=utf-8';
      ctx.body = page;
      return;
    }
    if (!ctx.path.startsWith(assetPrefix)) {
      return next();
    }
    const asset = assets.get(ctx.path.slice(assetPrefix.length));
    ctx.set('X-Content-Type-Options', 'nosniff');
    if (!asset) {
      ctx.status = 404;
      ctx.type = 'text/plain; charset=utf-8';
      ctx.body = 'Not found';
      return;
    }
    // A URL with the current version never changes; any other (an old page, a bare URL) is revalidated.
    ctx.set('Cache-Control', ctx.query.v === asset.version ? 'public, max-age=31536000, immutable' : 'public, max-age=0, must-revalidate');
    ctx.set('ETag', asset.etag);
    ctx.type = asset.type;
    ctx.status = 200;
    if (ctx.fresh) {
      ctx.status = 304;
      return;
    }
    ctx.body = asset.body;
  };
}
