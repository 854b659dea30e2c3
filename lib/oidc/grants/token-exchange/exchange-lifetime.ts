import { errors } from 'oidc-provider';

/**
 * Lifetimes never grow: an exchanged token lives as long as the resource gives its tokens, but never
 * past the end of the subject token or the actor token it came from (a token that outlived its
 * subject is a way round revocation and expiry). `now` is the instant the token is issued at (its
 * `iat`): a lifetime counted from another reading of the clock could end a second late.
 */
export function exchangedLifetime(
  resourceTtl: number,
  /** `exp`: when each token ends, in seconds; a token without one (an impersonation token) bounds nothing. */
  bounds: Array<{ parameter: 'subject_token' | 'actor_token'; exp: number | undefined }>,
  now: number,
): number {
  let ttl = resourceTtl;
  for (const { parameter, exp } of bounds) {
    if (exp === undefined) {
      continue;
    }
    const remaining = exp - now;
    if (remaining < 1) {
      throw new errors.InvalidRequest(`${parameter} is expired`);
    }
    ttl = Math.min(ttl, remaining);
  }
  return ttl;
}
