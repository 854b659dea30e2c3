import type { KoaContextWithOIDC, TTLFunction } from 'oidc-provider';

import { policyOf } from '../clients/application-policy.ts';

/** A refresh token is rotated for at most a year from its first issue; then its lifetime is final. */
const longestRotation = 365.25 * 86_400;

/**
 * Logto's `rotateRefreshToken`: off, a refresh token is used again and again until it expires; on
 * (the default), oidc-provider's rule: a public client's token (not bound to a DPoP key) on every
 * use, anyone's once 70% of its lifetime has passed. A rotated token used again revokes its grant:
 * every token of that sign-in (the provider's reuse detection).
 */
export function rotatesRefreshToken(ctx: KoaContextWithOIDC): boolean {
  const { RefreshToken: token, Client: client } = ctx.oidc.entities;
  if (!token || !client || !policyOf(client).rotateRefreshToken || token.totalLifetime() >= longestRotation) {
    return false;
  }
  if (client.clientAuthMethod === 'none' && !token.isSenderConstrained()) {
    return true;
  }
  return token.ttlPercentagePassed() >= 70;
}

/**
 * The application's `refreshTokenTtlInDays` (or `refreshTokenTtl`, seconds), 14 days unless set. A
 * browser application's token that is rotated keeps the first one's end (oidc-provider's default):
 * rotation does not make it live for ever.
 */
export const refreshTokenTtl: TTLFunction<InstanceType<KoaContextWithOIDC['oidc']['provider']['RefreshToken']>> = (
  ctx,
  token,
  client,
) => {
  const rotated = ctx.oidc.entities.RotatedRefreshToken;
  if (
    rotated &&
    client.applicationType === 'web' &&
    client.clientAuthMethod === 'none' &&
    !token.isSenderConstrained()
  ) {
    return rotated.remainingTTL;
  }
  return policyOf(client).refreshTokenTtl;
};
