import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import type Koa from 'koa';

import { logQuietly } from '../logger.ts';

const types: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
};

type Asset = { body: Buffer; type: string };

/** A browser application as `vite build` wrote it: its page, and the files the page names, by URL path. */
export type ViteBuild = { index: string; assets: Map<string, Asset> };

/**
 * Reads a Vite build folder once: `index.html` and every other file, keyed by the URL path it is
 * served at (`base`, the build's `base`, then its path in the folder). Undefined when not built.
 */
export function loadViteBuild(folder: URL, base: string): ViteBuild | undefined {
  const indexFile = new URL('index.html', folder);
  if (!existsSync(indexFile)) {
    return undefined;
  }
  const assets = new Map<string, Asset>();
  const files = readdirSync(fileURLToPath(folder), { recursive: true, encoding: 'utf8' });
  for (const name of files.filter((file) => file !== 'index.html' && statSync(new URL(file, folder)).isFile())) {
    assets.set(`${base}${name}`, {
      body: readFileSync(new URL(name, folder)),
      type: types[extname(name)] ?? 'application/octet-stream',
    });
  }
  return { index: readFileSync(indexFile, 'utf8'), assets };
}

/**
 * Answers a file of a build: its name carries a hash of its content, so it is cached for good.
 * Logged at debug: a page's load is its page's line.
 */
export function sendAsset(ctx: Koa.Context, asset: Asset | undefined): void {
  logQuietly(ctx);
  ctx.set('X-Content-Type-Options', 'nosniff');
  if (!asset) {
    ctx.status = 404;
    ctx.type = 'text/plain; charset=utf-8';
    ctx.body = 'Not found';
    return;
  }
  ctx.set('Cache-Control', 'public, max-age=31536000, immutable');
  ctx.type = asset.type;
  ctx.body = asset.body;
}
