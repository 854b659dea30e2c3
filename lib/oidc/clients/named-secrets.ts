import { createHash, timingSafeEqual } from 'node:crypto';
import { type ClientMetadata, Provider } from 'oidc-provider';

import type { ApplicationSecret } from '../../applications/secret-queries.ts';
import type { Logger } from '../../http/logger.ts';

/** An application's named secrets as the token endpoint compares them: by digest, in constant time. */
export type NamedSecrets = ReadonlyArray<{
  name: string;
  value: string;
  digest: Buffer;
  expiresAt: number | null;
}>;

const digestOf = (value: string) => createHash('sha256').update(value).digest();

export const namedSecretsOf = (secrets: ApplicationSecret[]): NamedSecrets =>
  secrets.map(({ name, value, expiresAt }) => ({ name, value, digest: digestOf(value), expiresAt }));

/** As oidc-provider decodes the parts of a Basic header (RFC 6749 §2.3.1: form-urlencoded). */
function decodePart(part: string): string | undefined {
  try {
    return decodeURIComponent(part.replace(/\+/g, '%20'));
  } catch {
    return undefined;
  }
}

/**
 * The client id and secret the current provider request presents, read as oidc-provider reads them
 * for `client_secret_post` (`client_secret` in the body, preferred) and `client_secret_basic`.
 * Anything it would refuse reads as nothing here: the provider then refuses it itself.
 */
function presentedCredentials(): { clientId: string; secret: string } | undefined {
  const ctx = Provider.ctx;
  if (!ctx) {
    return undefined;
  }
  const params = ctx.oidc.params ?? {};
  if (typeof params.client_secret === 'string' && params.client_secret !== '') {
    return typeof params.client_id === 'string'
      ? { clientId: params.client_id, secret: params.client_secret }
      : undefined;
  }
  const [scheme, encoded, ...rest] = (ctx.headers.authorization ?? '').split(' ');
  if (scheme.toLowerCase() !== 'basic' || !encoded || rest.length > 0) {
    return undefined;
  }
  const basic = Buffer.from(encoded, 'base64').toString('utf8');
  const colon = basic.indexOf(':');
  const clientId = colon === -1 ? undefined : decodePart(basic.slice(0, colon));
  const secret = colon === -1 ? undefined : decodePart(basic.slice(colon + 1));
  return clientId !== undefined && secret ? { clientId, secret } : undefined;
}

/**
 * oidc-provider compares one `client_secret` per client. An application may hold several named
 * secrets besides its legacy one: when the request authenticating as `id` presents one of them,
 * unexpired at this moment, the client the provider finds holds that one as its `client_secret`,
 * and the provider's own comparison accepts it. Anything else (a wrong, expired or deleted secret)
 * finds the stored metadata, fails the provider's comparison as a wrong secret does, and is counted
 * by the client-auth throttle like any failure; the throttle's refusal comes first either way.
 */
export function withPresentedSecret(
  metadata: ClientMetadata,
  secrets: NamedSecrets,
  id: string,
  logger: Logger,
): ClientMetadata {
  if (secrets.length === 0) {
    return metadata;
  }
  const presented = presentedCredentials();
  if (presented?.clientId !== id) {
    return metadata;
  }
  const digest = digestOf(presented.secret);
  // Every secret is compared, so that the time taken does not tell which one matched.
  const matching = secrets.filter((secret) => timingSafeEqual(secret.digest, digest));
  const now = Date.now();
  const valid = matching.find((secret) => secret.expiresAt === null || secret.expiresAt > now);
  if (valid) {
    return { ...metadata, client_secret: valid.value };
  }
  if (matching.length > 0) {
    // The operator's clue to a client that missed a rotation; never the value.
    logger.warn({ applicationId: id, secretName: matching[0].name }, 'client authentication with an expired secret');
  }
  return metadata;
}
