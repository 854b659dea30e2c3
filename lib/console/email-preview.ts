import type { Context } from 'koa';

import { formReader } from '../http/body.ts';
import { maxBodyBytes } from '../http/limits.ts';

/** Where the console's email template page posts the rendered HTML to show it in its preview frame. */
export const emailPreviewPath = '/console/email-preview';

// An HTML body of 256 Ki characters, percent-encoded, can be several times its size.
const readForm = formReader(8 * maxBodyBytes);

/**
 * The preview frame of the email templates page. An email's HTML styles itself inline, which the
 * console's own policy (nothing inline) would strip from a `srcdoc` frame, since such a frame
 * inherits it; so the console posts the HTML (rendered by `POST /api/email-templates/preview`) into a
 * frame, and this answers it as a document of its own under a policy for email: a sandbox (no
 * script, no form, an opaque origin that reads nothing of the console's), inline styles, images.
 * Only a frame of the console's own pages may ask (`Sec-Fetch-Site`, `Sec-Fetch-Dest`, which browsers
 * set and pages cannot): another site cannot have this service show its HTML.
 */
export async function emailPreview(ctx: Context): Promise<void> {
  ctx.set({
    'X-Content-Type-Options': 'nosniff',
    'Cache-Control': 'no-store',
    'Referrer-Policy': 'no-referrer',
  });
  ctx.type = 'text/plain; charset=utf-8';
  if (ctx.get('sec-fetch-site') !== 'same-origin' || ctx.get('sec-fetch-dest') !== 'iframe') {
    ctx.req.resume();
    ctx.status = 403;
    ctx.body = 'The email preview is shown only in a frame of the console.';
    return;
  }
  if (!ctx.is('application/x-www-form-urlencoded')) {
    ctx.req.resume();
    ctx.status = 415;
    ctx.body = 'The email preview takes a form.';
    return;
  }
  const form = await readForm(ctx);
  ctx.set({
    'Content-Security-Policy':
      "sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src https: data:; frame-ancestors 'self'",
    'X-Frame-Options': 'SAMEORIGIN',
  });
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = form.get('html') ?? '';
}
