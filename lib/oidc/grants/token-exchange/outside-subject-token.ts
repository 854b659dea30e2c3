import { errors, type KoaContextWithOIDC } from 'oidc-provider';

import type { Config } from '../../../config/env.ts';
import type { Queryable } from '../../../storage/database.ts';
import type { SharedCache } from '../../../storage/shared-cache.ts';
import { OutsideTokenRefused, outsideTokens } from '../../../trusted-issuers/outside-tokens.ts';
import { isRememberedAccessToken } from '../../tokens/access-tokens.ts';
import { accessTokenType, jwtTokenType } from '../../urns.ts';
import { factsOfOutsideJwt } from '../token-facts.ts';
import type { Subject } from './subject-token.ts';

/**
 * Subject tokens of trusted outside issuers (RFC 8693 federation): resolves a token of type `jwt`
 * or `access_token` whose issuer has a trust policy to our user under that policy, with the token's
 * own facts (its end, `act`, `may_act`, `cnf`) checked as our tokens' are, refusals as
 * 400 `invalid_request` naming the check. Any other token is left to today's path (undefined),
 * except a `jwt` one, which only a trusted outside issuer may present.
 */
export function outsideSubjectResolver(deps: { config: Config; db: Queryable; cache: SharedCache }) {
  const outside = outsideTokens(deps);

  return async function resolveOutsideSubject(
    ctx: KoaContextWithOIDC,
    token: string,
    type: string,
  ): Promise<(Subject & { trustedIssuerId: string }) | undefined> {
    // A token of ours checked before (API A exchanging one user's token again) is no outside one:
    // this skips decoding it to read its issuer.
    if (
      (type !== accessTokenType && type !== jwtTokenType) ||
      (type === accessTokenType && isRememberedAccessToken(deps.cache, token))
    ) {
      return undefined;
    }
    const policy = await outside.policyOf(token);
    if (!policy) {
      if (type === jwtTokenType) {
        // As before trusted issuers: the contract's answer to a type we do not take from this issuer.
        throw new errors.InvalidRequest('unsupported subject_token_type');
      }
      return undefined;
    }
    try {
      const { user, trustedIssuerId, claims } = await outside.accept(
        ctx,
        policy,
        token,
        ctx.oidc.client?.clientId ?? '',
      );
      return { user, trustedIssuerId, facts: factsOfOutsideJwt(claims) };
    } catch (error) {
      throw error instanceof OutsideTokenRefused ? new errors.InvalidRequest(`subject_token ${error.message}`) : error;
    }
  };
}
