import type Koa from 'koa';

import { packageFolder } from '../../config/package-folder.ts';
import { pageHeaders } from '../../http/pages/page-headers.ts';
import { loadViteBuild, sendAsset } from '../../http/pages/vite-build.ts';
import { currentCaptchaProvider } from '../../sign-in-experience/captcha/captcha-queries.ts';
import { captchaWidgetOrigins, publicCaptchaConfig } from '../../sign-in-experience/captcha/captcha-schemas.ts';
import { brandingImageOrigins, imageOrigins } from '../../sign-in-experience/image-origins.ts';
import { currentSignInExperience } from '../../sign-in-experience/sign-in-experience.ts';
import { firstPartyConsent } from '../consent/consent.ts';
import type { ExperienceContext } from '../context.ts';
import { findPublicClient } from '../public-client.ts';
import { iconLinks } from './favicon.ts';
import { pageIn, pageLanguage, signInParams } from './page-language.ts';

/** Where Vite writes the pages (`npm run build`, which `npm start` runs when the sources changed). */
const distFolder = new URL('sign-in/dist/', packageFolder);

/** Where the pages' script and stylesheet are served (the build's `base`). */
const assetPrefix = '/experience-assets/';

/** The sign-in page for ENDPOINT (where /oidc/auth sends a browser to sign in). */
export const signInUrl = (endpoint: string) => `${endpoint}/sign-in`;

/**
 * The pages, one application: /sign-in, /register, /reset-password and /consent (where /oidc/auth
 * sends the browser; a first party's consent is given there at once, consent.ts), and /callback/<connector id> and /callback/sso/<connector id>, where IdPs send it back.
 */
const isPage = (path: string) =>
  ['/sign-in', '/register', '/reset-password', '/consent', '/callback'].includes(path) ||
  /^\/callback\/(sso\/)?[\w-]{1,21}$/.test(path);

/** Where the logo of the application being signed in to is, when it has one (the page shows it). */
async function applicationLogoOrigin(
  context: Pick<ExperienceContext, 'db' | 'oidc'>,
  params: Record<string, unknown> | undefined,
): Promise<string[]> {
  const clientId = params?.client_id;
  if (typeof clientId !== 'string') {
    return [];
  }
  // A client whose document cannot be read now has no logo to show either.
  const client = await findPublicClient(context, clientId).catch(() => undefined);
  return imageOrigins([client?.branding.logoUrl]);
}

/**
 * The hosted sign-in pages (sign-in/, a Preact application that drives /api/experience from the
 * browser) and their assets under /experience-assets/, read once, here; anything else goes to `next`.
 * Each page is sent in the request's language, its texts with it (page-language.ts), and names
 * the sign-in experience's favicon, and its CSP lets the logos it shows load (page-headers.ts), and
 * while the captcha policy is on, the captcha widget's script and frame.
 */
export function pageRoutes(context: Pick<ExperienceContext, 'db' | 'cache' | 'config' | 'oidc'>): Koa.Middleware {
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
    const consented = ctx.path === '/consent' ? await firstPartyConsent(ctx, context) : undefined;
    if (consented) {
      ctx.status = 303;
      ctx.redirect(consented);
      return;
    }
    if (!build) {
      ctx.status = 503;
      ctx.type = 'text/plain; charset=utf-8';
      ctx.body = 'The sign-in pages are not built: run `npm run build` (npm start does it).';
      return;
    }
    const params = await signInParams(ctx, context.oidc);
    const settings = await currentSignInExperience(context.db, context.cache);
    const captcha = settings.captchaPolicy.enabled
      ? await currentCaptchaProvider(context.db, context.cache)
      : undefined;
    ctx.set(
      pageHeaders({
        images: [...brandingImageOrigins(settings), ...(await applicationLogoOrigin(context, params))],
        ...(captcha && captchaWidgetOrigins(publicCaptchaConfig(captcha))),
      }),
    );
    ctx.type = 'text/html; charset=utf-8';
    const icons = iconLinks(settings);
    const page = build.index.replace('<link rel="icon" href="/favicon.ico" />', () => icons);
    ctx.body = pageIn(page, await pageLanguage(ctx, context, params));
  };
}
