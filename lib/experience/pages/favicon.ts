import type Koa from 'koa';

import type { ServiceContext } from '../../http/context.ts';
import { logQuietly } from '../../http/logger.ts';
import { escapeHtml } from '../../oidc/pages/page.ts';
import type { SignInExperience } from '../../sign-in-experience/schemas.ts';
import { currentSignInExperience } from '../../sign-in-experience/sign-in-experience.ts';

/**
 * The service's icon, 32×32 PNG: a white keyhole on the sign-in pages' accent blue (#1d4ed8),
 * drawn from this SVG:
 * <svg viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#1d4ed8"/><circle cx="16" cy="12.5" r="5" fill="#fff"/><path d="M13 15h6l1.6 10h-9.2z" fill="#fff"/></svg>
 */
const png = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAACAAAAAgCAYAAABzenr0AAACCklEQVR4nMSXPU8UURSG3zMz+yFQrMkC2WV20bBxNdGEUGlHZ4SQ+AdEo/4BG+lNjJHGloJKSwswmGhJaUW2MUQT49e4gZ1mCpCFZT3eQ4KBmAHOZGbnaebOnLN5n517ZzLXwREKt78WBrrtRwRcZ6JxcxxCDDDQIuaGOX7YsvMvguWLwWGNDgfuzKdbRLxohmUkS5OZHnor9Xf/BCrT6zdh03v0ECMxJRJUnf5+nu3fH41LCb2lybv916yutXM3hXChzNntWccyCw4pIdkWg1MTkGyHiEahJOMAkxMDqA5nDs5/bHawuraFzj5USLYDJeWig4W5EYxfyh+73vjcxoOnHvygCw2WpjmfJbx+Vv0vXJBrS/OjOJcjaFAJzM0OojKUCa3LlDy+MwgNqimYnOg/tefG1T5oUAm4J/x7Tc9RVFPgtTqn9viB7lFQCayubcfSE1lg/pUPzw+/C19+7eH5Sx+JCezsMp4stkLrEt7eY2hQv4iKBSdSLTaBMTcbqRabQG0kG6kWm8CYm4tUC0O1CPvyhFIx3Flq0pOYQL2ag33CL6R2oaSbBpVA7Qy3uOYmKHCWVa5dB1SZWd8wnybDSAPmTcvsgBpICcm2zJdhagKSbe3bvGCGAXpPINnWxvKVb/yH7qPXMO5J9sFT4L2tL8lezQybSB7ZnE79XLn8Rk6OvbbS2J7/BQAA//8l7rl1AAAABklEQVQDADEDo/26lSt4AAAAAElFTkSuQmCC',
  'base64',
);

/** An ICO file holding one PNG image (every browser reads PNG-in-ICO). */
function icoOf(image: Buffer, size: number): Buffer {
  const header = Buffer.alloc(22);
  header.writeUInt16LE(0, 0); // reserved
  header.writeUInt16LE(1, 2); // type: icon
  header.writeUInt16LE(1, 4); // one image
  header.writeUInt8(size, 6); // width
  header.writeUInt8(size, 7); // height
  header.writeUInt8(0, 8); // no palette
  header.writeUInt8(0, 9); // reserved
  header.writeUInt16LE(1, 10); // colour planes
  header.writeUInt16LE(32, 12); // bits per pixel
  header.writeUInt32LE(image.length, 14);
  header.writeUInt32LE(header.length, 18); // where the image starts
  return Buffer.concat([header, image]);
}

const favicon = icoOf(png, 32);

/**
 * GET /favicon.ico, which browsers ask for on every page of the service (the sign-in pages, the
 * console, the provider's pages): a redirect to the sign-in experience's `branding.favicon` when
 * it names one (kept 5 minutes: a changed icon shows soon), else the default icon, cached for a
 * day (not for good: a later branded icon must be picked up).
 */
export function faviconRoute({ db, cache }: Pick<ServiceContext, 'db' | 'cache'>): Koa.Middleware {
  return async (ctx, next) => {
    if (ctx.path !== '/favicon.ico' || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) {
      await next();
      return;
    }
    logQuietly(ctx);
    const { branding } = await currentSignInExperience(db, cache);
    if (branding.favicon) {
      ctx.set('Cache-Control', 'public, max-age=300');
      ctx.redirect(branding.favicon);
      return;
    }
    ctx.set('Cache-Control', 'public, max-age=86400');
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.type = 'image/x-icon';
    ctx.body = favicon;
  };
}

/**
 * The sign-in pages' icon links: the sign-in experience's favicon (and its dark one, in dark mode)
 * named directly, else the service's own, /favicon.ico (the link the page's build has).
 */
export function iconLinks({ branding, color }: Pick<SignInExperience, 'branding' | 'color'>): string {
  if (!branding.favicon) {
    return '<link rel="icon" href="/favicon.ico" />';
  }
  const dark =
    color.isDarkModeEnabled && branding.darkFavicon
      ? `<link rel="icon" href="${escapeHtml(branding.darkFavicon)}" media="(prefers-color-scheme: dark)" />`
      : '';
  return `<link rel="icon" href="${escapeHtml(branding.favicon)}" />${dark}`;
}
