import { errors, type Configuration, type ErrorOut, type KoaContextWithOIDC } from 'oidc-provider';

import type { Queryable } from '../../storage/database.ts';
import type { SharedCache } from '../../storage/shared-cache.ts';
import { currentSignInExperience } from '../../sign-in-experience/sign-in-experience.ts';
import { applicationHome, escapeHtml, sendPage } from './page.ts';

/** How much of a value from the request the page quotes. */
const maxQuoted = 100;

/**
 * What a person is told: a title (also the heading) and a sentence, given the application's name
 * (escaped) when the provider knows the client.
 */
type Explanation = { title: string; says: (application: string | undefined) => string };

const explanations = {
  unknownClient: {
    title: "This application isn't known",
    says: () =>
      "The application that sent you here isn't registered with this sign-in service, so you can't sign in to it here. The link you followed may be out of date or mistyped.",
  },
  badRedirect: {
    title: "This sign-in link isn't set up correctly",
    says: (application) =>
      `${application ?? 'The application'} asked to send you back to an address that isn't registered for it, so the sign-in was stopped to keep your account safe. Nothing was sent to that address.`,
  },
  badSignOutRedirect: {
    title: "This sign-out link isn't set up correctly",
    says: (application) =>
      `${application ?? 'The application'} asked to send you, once signed out, to an address that isn't registered for it, so nothing was done: you are still signed in.`,
  },
  expired: {
    title: 'This sign-in took too long',
    says: () =>
      'It expired, or it was already finished in this or another tab. Start again from the application you were signing in to.',
  },
  signOutExpired: {
    title: 'This sign-out page has expired',
    says: () => 'Nothing was changed. Start signing out again from the application.',
  },
  denied: {
    title: 'Access was not given',
    says: (application) =>
      `The sign-in to ${application ?? 'the application'} was cancelled or is not allowed. If you meant to sign in, start again from the application.`,
  },
  serverError: {
    title: 'Something went wrong on our side',
    says: () =>
      "The sign-in service couldn't finish your request. Try again in a few minutes; if it keeps happening, tell the application's support team.",
  },
  badRequest: {
    title: "This request can't be completed",
    says: (application) =>
      `${application ?? 'The application'} sent a request this sign-in service can't accept. Start again from the application; if it keeps happening, tell its support team.`,
  },
} satisfies Record<string, Explanation>;

/** The provider's error, as the person's situation. */
function explain(ctx: KoaContextWithOIDC, out: ErrorOut, error: unknown): Explanation {
  const route = ctx.oidc.route;
  if (route === 'end_session_confirm' && out.error === 'invalid_request') {
    // The confirmation form's state is gone (another tab signed out, or the session ended).
    return explanations.signOutExpired;
  }
  if (error instanceof errors.SessionNotFound) {
    return explanations.expired;
  }
  switch (out.error) {
    case 'invalid_client':
      return explanations.unknownClient;
    case 'invalid_redirect_uri':
      return explanations.badRedirect;
    case 'access_denied':
      return explanations.denied;
    case 'server_error':
    case 'temporarily_unavailable':
      return explanations.serverError;
    case 'invalid_request':
      return route === 'end_session' && out.error_description === 'post_logout_redirect_uri not registered'
        ? explanations.badSignOutRedirect
        : explanations.badRequest;
    default:
      return explanations.badRequest;
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
    const name = client?.clientName ? escapeHtml(client.clientName) : undefined;
    const { title, says } = explain(ctx, out, error);
    const home = applicationHome(client?.redirectUris);
    const wayBack = home
      ? `      <a class="button primary" href="${escapeHtml(home)}">Back to ${name ?? 'the application'}</a>`
      : '      <p class="notice">You can close this tab, or go back to the application you came from.</p>';
    // A server error's description is the provider's "oops! something went wrong": the code says enough.
    const description =
      out.error !== 'server_error' && out.error_description ? ` (${escapeHtml(out.error_description)})` : '';
    const supportEmail = await currentSignInExperience(db, cache).then(
      (settings) => settings.supportEmail,
      // The page may be telling of the database being down: it is shown without the address then.
      () => null,
    );
    // The application id asked for, to quote to support (the name, when known, is in the sentence).
    const clientId = client?.clientId ?? ctx.oidc.params?.client_id ?? ctx.query.client_id;
    const application =
      typeof clientId === 'string' && clientId !== ''
        ? `, application <code>${escapeHtml(clientId.slice(0, maxQuoted))}</code>`
        : '';
    const support = supportEmail
      ? ` Need help? Write to <a href="mailto:${escapeHtml(supportEmail)}">${escapeHtml(supportEmail)}</a>.`
      : '';
    sendPage(ctx, {
      title,
      body: [
        `      <p class="aside">${says(name)}</p>`,
        wayBack,
        `      <p class="hint">For support: <code>${escapeHtml(out.error)}</code>${description}${application}.${support}</p>`,
      ].join('\n'),
    });
  };
}
