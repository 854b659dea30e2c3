import type { Provider } from 'oidc-provider';

import { tokenRequests } from '../../metrics/metrics.ts';
import { tokenExchangeGrantType } from '../urns.ts';

/** The grant types this provider serves; anything a client makes up is `other` (labels stay few). */
const grantTypes = new Set(['authorization_code', 'client_credentials', 'refresh_token', tokenExchangeGrantType]);
const grantTypeOf = (value: unknown) => (typeof value === 'string' && grantTypes.has(value) ? value : 'other');

/** oidc-provider's error codes are its own words (`invalid_grant`); anything else is not a label. */
const errorCodeOf = (error: unknown) => {
  const code = (error as { error?: unknown } | undefined)?.error;
  return typeof code === 'string' && /^[a-z_]{1,64}$/.test(code) ? code : 'server_error';
};

/** Counts the token endpoint's answers by grant type and result (`success` or the OAuth error code). */
export function countTokenRequests(provider: Provider): void {
  provider.on('grant.success', (ctx) =>
    tokenRequests.inc({ grant_type: grantTypeOf(ctx.oidc.params?.grant_type), result: 'success' }),
  );
  provider.on('grant.error', (ctx, error) =>
    tokenRequests.inc({ grant_type: grantTypeOf(ctx.oidc.params?.grant_type), result: errorCodeOf(error) }),
  );
  // A server error at the token endpoint is reported as such, not as grant.error.
  provider.on('server_error', (ctx) => {
    // oidc-provider's error handlers read ctx.oidc before they emit, so it is there.
    if (ctx.oidc.route === 'token') {
      tokenRequests.inc({ grant_type: grantTypeOf(ctx.oidc.params?.grant_type), result: 'server_error' });
    }
  });
}
