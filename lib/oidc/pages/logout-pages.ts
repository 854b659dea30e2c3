import type { KoaContextWithOIDC } from 'oidc-provider';

import type { Queryable } from '../../storage/database.ts';
import type { SharedCache } from '../../storage/shared-cache.ts';
import { applicationHome, brandImages, escapeHtml, formTargetOf, providerPageLanguage, sendPage } from './page.ts';
import { signOutScriptPath } from './sign-out-script.ts';

/** The sign-out pages, in the request's language (page.ts). */
export function logoutPages(db: Queryable, cache: SharedCache) {
  return {
    /**
     * RP-initiated logout's confirmation (`logoutSource`). `form` is the provider's: an empty form
     * posting to /oidc/session/end/confirm with its CSRF token (`xsrf`). The buttons submit it as the
     * provider's own page does: "Sign out" sends `logout=yes` (the whole session ends), "Stay signed in"
     * sends nothing more (the session stays; only this application's sign-in is dropped, as it asked).
     * When the application proved which sign-in it ends (an `id_token_hint` the provider validated),
     * the page presses "Sign out" itself (sign-out-script.ts): one click in the application signs the
     * person out. Without one, anyone could link a sign-out: the person confirms.
     */
    async logoutSource(ctx: KoaContextWithOIDC, form: string): Promise<void> {
      const { language, t } = await providerPageLanguage(db, cache, ctx);
      const name = ctx.oidc.client?.clientName;
      const returnTo = ctx.oidc.params?.post_logout_redirect_uri;
      // Chromium checks `form-action` on the confirmation's redirect too: allow the registered address it goes to.
      const target = typeof returnTo === 'string' ? formTargetOf(returnTo) : undefined;
      sendPage(ctx, {
        language,
        title: name ? t('providerPages.signOutOfTitle', { application: name }) : t('providerPages.signOutTitle'),
        body: [
          `      <p class="aside">${escapeHtml(name ? t('providerPages.signedInTo', { application: name }) : t('providerPages.signedIn'))}</p>`,
          // Out of the layout (an empty form would take a row); the buttons name it with `form=`.
          `      <div hidden>${form}</div>`,
          `      <button class="primary" type="submit" form="op.logoutForm" name="logout" value="yes" autofocus>${escapeHtml(t('providerPages.signOut'))}</button>`,
          `      <button class="secondary" type="submit" form="op.logoutForm">${escapeHtml(t('providerPages.staySignedIn'))}</button>`,
          `      <p class="hint">${escapeHtml(t('providerPages.signOutEverywhere'))}</p>`,
        ].join('\n'),
        formTargets: target ? [target] : [],
        images: await brandImages(db, cache),
        script: ctx.oidc.entities.IdTokenHint ? signOutScriptPath : undefined,
      });
    },

    /** Where a sign-out without a `post_logout_redirect_uri` ends (`postLogoutSuccessSource`). */
    async postLogoutSuccessSource(ctx: KoaContextWithOIDC): Promise<void> {
      const { language, t } = await providerPageLanguage(db, cache, ctx);
      const client = ctx.oidc.client;
      const name = client?.clientName;
      const home = applicationHome(client?.redirectUris);
      const backTo = t('providerPages.backTo', { application: name ?? t('providerPages.theApplication') });
      sendPage(ctx, {
        language,
        title: t('providerPages.signedOutTitle'),
        body: [
          `      <p class="aside">${escapeHtml(name ? t('providerPages.signedOutOf', { application: name }) : t('providerPages.signedOut'))}</p>`,
          ...(home ? [`      <a class="button secondary" href="${escapeHtml(home)}">${escapeHtml(backTo)}</a>`] : []),
        ].join('\n'),
        images: await brandImages(db, cache),
      });
    },
  };
}
