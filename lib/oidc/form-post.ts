import type { Context } from 'koa';

import { formReader } from '../http/body.ts';
import { RequestError } from '../http/errors.ts';

/** What the following GET can carry in its URL within Node's 16 KB of request headers. */
const readForm = formReader(8 * 1024);

/**
 * OIDC Core §3.1.2.1 (and RP-Initiated Logout §2) let a client POST the request as a form. The
 * provider serves these by GET only: its POST routes need the session cookie sent on a cross-site
 * POST (`SameSite=None`), which plain-http deployments cannot set and which gives up `Lax`'s CSRF
 * protection. So a form post is answered with a 303 to the same endpoint with the form as its query;
 * the browser follows it as a top-level GET, which carries the `Lax` session cookie.
 */
export const formPostEndpoints = new Set(['/oidc/auth', '/oidc/session/end']);

export async function redirectFormPost(ctx: Context): Promise<void> {
  if (ctx.get('content-type') !== '' && !ctx.is('application/x-www-form-urlencoded')) {
    ctx.req.resume();
    ctx.status = 415;
    ctx.body = {
      error: 'invalid_request',
      error_description: 'the request must be form-encoded (application/x-www-form-urlencoded)',
    };
    return;
  }
  let form: URLSearchParams;
  try {
    form = await readForm(ctx);
  } catch (error) {
    const status = error instanceof RequestError ? error.status : 400;
    ctx.status = status;
    ctx.body = {
      error: 'invalid_request',
      error_description: status === 413 ? 'the request is too large' : 'the request body could not be read',
    };
    return;
  }
  const query = form.toString();
  // Relative to this endpoint, so that a path prefix in front of the service is kept.
  const endpoint = ctx.path.slice(ctx.path.lastIndexOf('/') + 1);
  ctx.redirect(query ? `${endpoint}?${query}` : endpoint);
  ctx.status = 303;
}
