import { type Configuration, type ErrorOut, errors, type KoaContextWithOIDC } from 'oidc-provider';

import { brandingImageOrigins } from '../../sign-in-experience/image-origins.ts';
import { currentSignInExperience } from '../../sign-in-experience/sign-in-experience.ts';
import type { Queryable } from '../../storage/database.ts';
import type { SharedCache } from '../../storage/shared-cache.ts';
import { applicationHome, escapeHtml, providerPageLanguage, sendPage } from './page.ts';

/** How much of a value from the request the page quotes. */
const maxQuoted = 100;

/**
 * What a person is told, by the catalogue's `providerPages` keys: `<name>Title` (also the heading)
 * and `<name>`, a sentence that may name the application (`{{application}}`).
 */
type Explanation =
  | 'unknownClient'
  | 'badRedirect'
  | 'badSignOutRedirect'
  | 'expired'
  | 'signOutExpired'
  | 'denied'
  | 'serverError'
  | 'badRequest';

/** The provider's error, as the person's situation. */
function explain(ctx: KoaContextWithOIDC, out: ErrorOut, error: unknown): Explanation {
  const route = ctx.oidc.route;
  if (route === 'end_session_confirm' && out.error === 'invalid_request') {
    // The confirmation form's state is gone (another tab signed out, or the session ended).
    return 'signOutExpired';
  }
  if (error instanceof errors.SessionNotFound) {
    return 'expired';
  }
  switch (out.error) {
    case 'invalid_client':
      return 'unknownClient';
    case 'invalid_redirect_uri':
      return 'badRedirect';
    case 'access_denied':
      return 'denied';
    case 'server_error':
    case 'temporarily_unavailable':
      return 'serverError';
    case 'invalid_request':
      return route === 'end_session' && out.error_description === 'post_logout_redirect_uri not registered'
        ? 'badSignOutRedirect'
        : 'badRequest';
    default:
      return 'badRequest';
  }
}

/**
 * The provider's `renderError`: its error pages (an unknown client, a redirect URI not registered,
 * an expired interaction…) as a page that says what happened in a sentence, with a way back and the
 * OAuth error code, small, for support. A client that asks for JSON gets the OAuth error as JSON
 * (the provider's authorization endpoint renders without asking).
 */
export function renderError(db: Queryable, cache: SharedCache): NonNullable<Configuration['renderError']> {
  return async (ctx, out, error) => {
    if (ctx.accepts('html', 'json') === 'json') {
      ctx.body = out;
      return;
    }
    const client = ctx.oidc.client;
    const { language, t } = await providerPageLanguage(db, cache, ctx);
    const name = client?.clientName;
    const explanation = explain(ctx, out, error);
    const title = t(`providerPages.${explanation}Title`);
    const says = t(`providerPages.${explanation}`, {
      application:
        name ?? t(explanation === 'denied' ? 'providerPages.theApplication' : 'providerPages.theApplicationStart'),
    });
    const home = applicationHome(client?.redirectUris);
    const wayBack = home
      ? `      <a class="button primary" href="${escapeHtml(home)}">${escapeHtml(t('providerPages.backTo', { application: name ?? t('providerPages.theApplication') }))}</a>`
      : `      <p class="notice">${escapeHtml(t('providerPages.closeTab'))}</p>`;
    // A server error's description is the provider's "oops! something went wrong": the code says enough.
    const description =
      out.error !== 'server_error' && out.error_description ? ` (${escapeHtml(out.error_description)})` : '';
    // The page may be telling of the database being down: it is shown without the address and the brand's icon then.
    const settings = await currentSignInExperience(db, cache).catch(() => undefined);
    const supportEmail = settings?.supportEmail;
    // The application id asked for, to quote to support (the name, when known, is in the sentence).
    const clientId = client?.clientId ?? ctx.oidc.params?.client_id ?? ctx.query.client_id;
    const application =
      typeof clientId === 'string' && clientId !== ''
        ? `, ${escapeHtml(t('providerPages.applicationId'))} <code>${escapeHtml(clientId.slice(0, maxQuoted))}</code>`
        : '';
    const support = supportEmail
      ? ` ${escapeHtml(t('providerPages.needHelp'))} <a href="mailto:${escapeHtml(supportEmail)}">${escapeHtml(supportEmail)}</a>.`
      : '';
    sendPage(ctx, {
      language,
      title,
      body: [
        `      <p class="aside">${escapeHtml(says)}</p>`,
        wayBack,
        `      <p class="hint">${escapeHtml(t('providerPages.forSupport'))} <code>${escapeHtml(out.error)}</code>${description}${application}.${support}</p>`,
      ].join('\n'),
      images: settings ? brandingImageOrigins(settings) : [],
    });
  };
}
