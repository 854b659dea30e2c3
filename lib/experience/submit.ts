import type { Context } from 'koa';
import type { Provider } from 'oidc-provider';

/**
 * Ends the interaction signed in as `userId`; returns where the browser goes next (back to
 * /oidc/auth). The provider then consents on a first-party application's behalf, or asks for the
 * person's consent and sends the browser to the consent page (lib/oidc/consent-policy.ts).
 */
export function finishSignIn(ctx: Context, provider: Provider, userId: string): Promise<string> {
  return provider.interactionResult(
    ctx.req,
    ctx.res,
    { login: { accountId: userId } },
    { mergeWithLastSubmission: false },
  );
}
