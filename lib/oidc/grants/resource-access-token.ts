import type { KoaContextWithOIDC } from 'oidc-provider';

import type { Resource } from '../../resources/schemas.ts';
import { accessTokenAlgorithm } from '../resource-servers.ts';

/**
 * A user's JWT access token for one API resource, issued by a grant of ours (RFC 9068 form, the
 * resource's lifetime). No grant row: a JWT access token is self-contained, and a write per
 * issuance would sit on the hot path.
 */
export async function issueResourceAccessToken(
  ctx: KoaContextWithOIDC,
  { userId, gty, scope, resource }: { userId: string; gty: string; scope: string; resource: Resource },
): Promise<{ value: string; expiresIn: number }> {
  const { provider, client } = ctx.oidc;
  const token = new provider.AccessToken({
    accountId: userId,
    client,
    gty,
    scope: scope || undefined,
  } as ConstructorParameters<typeof provider.AccessToken>[0]);
  token.resourceServer = new provider.ResourceServer(resource.indicator, {
    scope,
    audience: resource.indicator,
    accessTokenTTL: resource.accessTokenTtl,
    accessTokenFormat: 'jwt',
    jwt: { sign: { alg: accessTokenAlgorithm } },
  });
  ctx.oidc.entity('AccessToken', token);
  return { value: await token.save(), expiresIn: token.expiration };
}
