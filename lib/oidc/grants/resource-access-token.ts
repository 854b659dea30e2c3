import type { KoaContextWithOIDC } from 'oidc-provider';

import type { Resource } from '../../resources/schemas.ts';
import { accessTokenAlgorithm } from '../resource-servers.ts';

export type ResourceAccessToken = {
  userId: string;
  gty: string;
  scope: string;
  resource: Resource;
  /**
   * Shorter than the resource's lifetime (an exchanged token ends with the tokens it came from),
   * counted from `issuedAt` (epoch seconds), the instant it was worked out at.
   */
  lifetime?: { issuedAt: number; expiresIn: number };
  /** RFC 8693 §4.1: the actor chain. */
  act?: Record<string, unknown>;
  /** Delegation claims that travel from the subject token (`may_act`, `delegation_client_id`). */
  delegation?: Record<string, unknown>;
  /** RFC 9449: the thumbprint of the DPoP key the token is bound to (`cnf.jkt`). */
  proofKey?: string;
};

/**
 * A user's JWT access token for one API resource, issued by a grant of ours (RFC 9068 form, the
 * resource's lifetime unless shorter). No grant row: a JWT access token is self-contained, and a
 * write per issuance would sit on the hot path.
 */
export async function issueResourceAccessToken(
  ctx: KoaContextWithOIDC,
  { userId, gty, scope, resource, lifetime, act, delegation, proofKey }: ResourceAccessToken,
): Promise<{ value: string; expiresIn: number; tokenType: string }> {
  const { provider, client } = ctx.oidc;
  type TokenProperties = ConstructorParameters<typeof provider.AccessToken>[0];
  // No grantId: the types ask for one, the JWT format does not use it.
  const properties: Partial<TokenProperties> = {
    accountId: userId,
    client,
    gty,
    scope: scope || undefined,
    ...(lifetime && {
      iat: lifetime.issuedAt,
      exp: lifetime.issuedAt + lifetime.expiresIn,
      expiresIn: lifetime.expiresIn,
    }),
    extra: act || delegation ? { ...delegation, ...(act && { act }) } : undefined,
  };
  const token = new provider.AccessToken(properties as TokenProperties);
  token.resourceServer = new provider.ResourceServer(resource.indicator, {
    scope,
    audience: resource.indicator,
    accessTokenTTL: resource.accessTokenTtl,
    accessTokenFormat: 'jwt',
    jwt: { sign: { alg: accessTokenAlgorithm } },
  });
  if (proofKey) {
    token.setThumbprint('jkt', proofKey);
  }
  ctx.oidc.entity('AccessToken', token);
  return { value: await token.save(), expiresIn: token.expiration, tokenType: token.tokenType };
}
