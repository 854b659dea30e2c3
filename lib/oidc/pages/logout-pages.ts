import type { KoaContextWithOIDC } from 'oidc-provider';

import { applicationHome, escapeHtml, formTargetOf, sendPage } from './page.ts';

/**
 * RP-initiated logout's confirmation (`logoutSource`). `form` is the provider's: an empty form
 * posting to /oidc/session/end/confirm with its CSRF token (`xsrf`). The buttons submit it as the
 * provider's own page does: "Sign out" sends `logout=yes` (the whole session ends), "Stay signed in"
 * sends nothing more (the session stays; only this application's sign-in is dropped, as it asked).
 */
export function logoutSource(ctx: KoaContextWithOIDC, form: string): void {
  const name = ctx.oidc.client?.clientName;
  const returnTo = ctx.oidc.params?.post_logout_redirect_uri;
  // Chromium checks `form-action` on the confirmation's redirect too: allow the registered address it goes to.
  const target = typeof returnTo === 'string' ? formTargetOf(returnTo) : undefined;
  sendPage(ctx, {
    title: name ? `Sign out of ${name}?` : 'Sign out?',
    body: [
      `      <p class="aside">You are signed in${name ? ` to ${escapeHtml(name)}` : ''} through this sign-in service.</p>`,
      // Out of the layout (an empty form would take a row); the buttons name it with `form=`.
      `      <div hidden>${form}</div>`,
      '      <button class="primary" type="submit" form="op.logoutForm" name="logout" value="yes" autofocus>Sign out</button>',
      '      <button class="secondary" type="submit" form="op.logoutForm">Stay signed in</button>',
      '      <p class="hint">Signing out also ends your session for the other applications that use this sign-in service.</p>',
    ].join('\n'),
    formTargets: target ? [target] : [],
  });
}

/** Where a sign-out without a `post_logout_redirect_uri` ends (`postLogoutSuccessSource`). */
export function postLogoutSuccessSource(ctx: KoaContextWithOIDC): void {
  const client = ctx.oidc.client;
  const name = client?.clientName ? escapeHtml(client.clientName) : undefined;
  const home = applicationHome(client?.redirectUris);
  sendPage(ctx, {
    title: "You're signed out",
    body: [
      `      <p class="aside">You signed out${name ? ` of ${name}` : ''}. You can close this tab.</p>`,
      ...(home
        ? [`      <a class="button secondary" href="${escapeHtml(home)}">Back to ${name ?? 'the application'}</a>`]
        : []),
    ].join('\n'),
  });
}
