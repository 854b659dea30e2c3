import { RequestError } from '../http/errors.ts';

const withoutTrailingSlash = (url: string) => url.replace(/\/+$/, '');

/**
 * A policy cannot name this service's own issuer: our tokens are verified as ours (our keys, our
 * revocations, our holders), never under a trust policy, so such a policy would either do nothing
 * or, were the lookup order ever changed, let another key set vouch for tokens of ours. The routes'
 * rule and the import's.
 */
export function assertNotOwnIssuer(issuer: string, ownIssuer: string): void {
  if (withoutTrailingSlash(issuer) === withoutTrailingSlash(ownIssuer)) {
    throw new RequestError('guard.invalid_input', {
      reason: `The issuer ${issuer} is this service's own: its tokens are verified as ours, not under a trust policy.`,
    });
  }
}
