import type { KoaContextWithOIDC } from 'oidc-provider';

import type { Resource } from '../../resources/schemas.ts';
import { accessTokenAlgorithm } from '../resource-servers.ts';

export type ResourceAccessToken = {
  userId: string;
  gty: string;
  scope: string;
  /** The API resource, or an organization (`urn:logto:organization:<id>`, Logto's organization token). */
  resource: Pick<Resource, 'indicator' | 'accessTokenTtl'>;
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

type IssuedToken = { value: string; expiresIn: number; tokenType: string };

/** The token's properties, as the provider's AccessToken takes them. */
function tokenProperties(
  ctx: KoaContextWithOIDC,
  { userId, gty, scope, lifetime, act, delegation }: Omit<ResourceAccessToken, 'resource' | 'proofKey'>,
) {
  return {
    accountId: userId,
    client: ctx.oidc.client,
    gty,
    scope: scope || undefined,
    ...(lifetime && {
      iat: lifetime.issuedAt,
      exp: lifetime.issuedAt + lifetime.expiresIn,
      expiresIn: lifetime.expiresIn,
    }),
    extra: act || delegation ? { ...delegation, ...(act && { act }) } : undefined,
  };
}

/**
 * A user's JWT access token for one API resource, issued by a grant of ours (RFC 9068 form, the
 * resource's lifetime unless shorter). No grant row: a JWT access token is self-contained, and a
 * write per issuance would sit on the hot path.
 */
export async function issueResourceAccessToken(
  ctx: KoaContextWithOIDC,
  { userId, gty, scope, resource, lifetime, act, delegation, proofKey }: ResourceAccessToken,
): Promise<IssuedToken> {
  const { provider } = ctx.oidc;
  type TokenProperties = ConstructorParameters<typeof provider.AccessToken>[0];
  // No grantId: the types ask for one, the JWT format does not use it.
  const properties: Partial<TokenProperties> = tokenProperties(ctx, { userId, gty, scope, lifetime, act, delegation });
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

/**
 * A user's opaque access token for the provider's own userinfo (Logto's default audience, an
 * exchange that names no resource), under a grant of its OpenID scopes, which userinfo reads.
 */
export async function issueUserinfoAccessToken(
  ctx: KoaContextWithOIDC,
  token: Omit<ResourceAccessToken, 'resource'>,
): Promise<IssuedToken> {
  const { provider, client } = ctx.oidc;
  type TokenProperties = ConstructorParameters<typeof provider.AccessToken>[0];
  const grant = new provider.Grant({ accountId: token.userId, clientId: client?.clientId });
  if (token.scope) {
    grant.addOIDCScope(token.scope);
  }
  const grantId = await grant.save();
  const accessToken = new provider.AccessToken({ ...tokenProperties(ctx, token), grantId } as TokenProperties);
  if (token.proofKey) {
    accessToken.setThumbprint('jkt', token.proofKey);
  }
  ctx.oidc.entity('AccessToken', accessToken);
  return { value: await accessToken.save(), expiresIn: accessToken.expiration, tokenType: accessToken.tokenType };
}
