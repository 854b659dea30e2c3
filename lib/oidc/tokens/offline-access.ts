import type Koa from 'koa';

/**
 * oidc-provider drops `offline_access` from an authorization request whose `prompt` lacks `consent`
 * (OIDC Core §11: unless other conditions permit offline access). Here consent is that condition:
 * a first-party application is consented to on the person's behalf, a third party on the consent
 * page (consent-policy.ts). So a request asking `offline_access` asks for consent too, and gets its
 * refresh token without the `prompt=consent` Logto's SDK sends; `prompt=none` stays as it is (it
 * allows no page, so offline access is dropped as the provider would).
 */
export function askConsentForOfflineAccess(ctx: Koa.Context): void {
  if (ctx.method !== 'GET' || ctx.path !== '/oidc/auth') {
    return;
  }
  const query = new URLSearchParams(ctx.querystring);
  const scope = query.get('scope')?.split(' ') ?? [];
  const prompt = query.get('prompt')?.split(' ').filter(Boolean) ?? [];
  if (query.getAll('scope').length !== 1 || query.getAll('prompt').length > 1) {
    return; // the provider refuses repeated parameters itself
  }
  if (scope.includes('offline_access') && !prompt.includes('consent') && !prompt.includes('none')) {
    query.set('prompt', [...prompt, 'consent'].join(' '));
    ctx.querystring = query.toString();
  }
}
