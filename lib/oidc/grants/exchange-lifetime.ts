import { errors } from 'oidc-provider';

import type { TokenFacts } from './token-facts.ts';

/**
 * Lifetimes never grow: an exchanged token lives as long as the resource gives its tokens, but never
 * past the end of the subject token or the actor token it came from (a token that outlived its
 * subject is a way round revocation and expiry).
 */
export function exchangedLifetime(
  resourceTtl: number,
  bounds: Array<{ parameter: 'subject_token' | 'actor_token'; facts: TokenFacts | undefined }>,
): number {
  const now = Math.floor(Date.now() / 1000);
  let ttl = resourceTtl;
  for (const { parameter, facts } of bounds) {
    if (!facts) {
      continue;
    }
    const remaining = facts.exp - now;
    if (remaining < 1) {
      throw new errors.InvalidRequest(`${parameter} is expired`);
    }
    ttl = Math.min(ttl, remaining);
  }
  return ttl;
}
