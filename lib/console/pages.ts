import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';

import type Koa from 'koa';

import { pageHeaders } from '../http/page-headers.ts';

/** Where Vite writes the console (`npm run build:console`; `npm install` and `npm start` run it). */
const distFolder = new URL('../../console/dist/', import.meta.url);
const prefix = '/console';

const types: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
};

type Asset = { body: Buffer; type: string };

function loadBuild(): { index: string; assets: Map<string, Asset> } | undefined {
  const indexFile = new URL('index.html', distFolder);
  if (!existsSync(indexFile)) {
    return undefined;
  }
  const assets = new Map<string, Asset>();
  const assetFolder = new URL('assets/', distFolder);
  for (const name of existsSync(assetFolder) ? readdirSync(fileURLToPath(assetFolder)) : []) {
    assets.set(`${prefix}/assets/${name}`, {
      body: readFileSync(new URL(name, assetFolder)),
      type: types[extname(name)] ?? 'application/octet-stream',
    });
  }
  return { index: readFileSync(indexFile, 'utf8'), assets };
}

/**
 * The admin console at /console: the built single-page application, read once at start. Assets
 * carry a content hash in their names, so they are cached for good; every other path under
 * /console is a client route and gets the application's page (the SPA fallback).
 */
export function consolePages(): Koa.Middleware {
  const build = loadBuild();
  return async (ctx, next) => {
    if ((ctx.method !== 'GET' && ctx.method !== 'HEAD') || (ctx.path !== prefix && !ctx.path.startsWith(`${prefix}/`))) {
      return next();
    }
    ctx.set('X-Content-Type-Options', 'nosniff');
    if (!build) {
      ctx.status = 503;
      ctx.type = 'text/plain; charset=utf-8';
      ctx.body = 'The console is not built: run `npm run build:console` (npm install and npm start do it).';
      return;
    }
    if (ctx.path.startsWith(`${prefix}/assets/`)) {
      const asset = build.assets.get(ctx.path);
      if (!asset) {
        ctx.status = 404;
        ctx.type = 'text/plain; charset=utf-8';
        ctx.body = 'Not found';
        return;
      }
      ctx.set('Cache-Control', 'public, max-age=31536000, immutable');
      ctx.type = asset.type;
      ctx.body = asset.body;
      return;
    }
    ctx.set(pageHeaders);
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = build.index;
  };
}
