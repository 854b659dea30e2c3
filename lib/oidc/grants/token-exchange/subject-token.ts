import { errors, type Provider } from 'oidc-provider';

import { findPersonalAccessTokenByValue } from '../../../personal-access-tokens/queries.ts';
import type { Queryable } from '../../../storage/database.ts';
import type { SharedCache } from '../../../storage/shared-cache.ts';
import type { LocalUser } from '../../../trusted-issuers/outside-tokens.ts';
import { findImpersonationToken, hashSubjectToken } from '../../impersonation/subject-token-queries.ts';
import {
  type AccessTokenClaims,
  AccessTokenRefused,
  isApplicationToken,
  verifyAccessToken,
} from '../../tokens/access-tokens.ts';
import { impersonationTokenType, personalAccessTokenType } from '../../urns.ts';
import { factsOfJwt, factsOfOpaque, type TokenFacts } from '../token-facts.ts';

/**
 * What a subject token speaks for: its user, the application an impersonation token names as actor,
 * and the token's own facts (its end, delegation claims, DPoP key) where it has them. `exp` (seconds)
 * is the end of a token without facts that the exchanged token must not outlive (a personal access
 * token's expiry).
 */
export type Subject = {
  user: LocalUser;
  actor?: string;
  impersonationTokenId?: string;
  facts?: TokenFacts;
  exp?: number;
};

const invalid = (description: string) => new errors.InvalidRequest(`subject_token ${description}`);

async function verifyJwt(db: Queryable, cache: SharedCache, issuer: string, token: string): Promise<AccessTokenClaims> {
  try {
    return await verifyAccessToken(db, cache, issuer, token);
  } catch (error) {
    throw error instanceof AccessTokenRefused ? invalid(error.message) : error;
  }
}

/** An impersonation token (`POST /api/subject-tokens`): unused and unexpired, or refused; undefined when it is none. */
async function resolveImpersonation(db: Queryable, token: string): Promise<Subject | undefined> {
  const row = await findImpersonationToken(db, hashSubjectToken(token));
  if (!row) {
    return undefined;
  }
  if (row.consumed_at !== null) {
    throw invalid('was already used (an impersonation token is single use)');
  }
  if (row.expires_at <= Date.now()) {
    throw invalid('is expired');
  }
  return { user: { id: row.user_id }, actor: row.application_id ?? undefined, impersonationTokenId: row.id };
}

/**
 * Resolves a subject token to its user. Every failure is `invalid_request` naming the reason
 * (RFC 8693 §2.2.2); whether the user may still act is the caller's check.
 */
export async function resolveSubject(
  provider: Provider,
  db: Queryable,
  cache: SharedCache,
  issuer: string,
  token: string,
  type: string,
): Promise<Subject> {
  if (type === impersonationTokenType) {
    const impersonation = await resolveImpersonation(db, token);
    if (!impersonation) {
      throw invalid('is not a valid impersonation token');
    }
    return impersonation;
  }
  if (type === personalAccessTokenType) {
    // Read on every exchange, never remembered: a deleted token is refused at once.
    const found = await findPersonalAccessTokenByValue(db, token);
    if (!found) {
      throw invalid('is not a valid personal access token');
    }
    if (found.expiresAt !== null && found.expiresAt <= Date.now()) {
      throw invalid('is expired');
    }
    return { user: { id: found.userId }, ...(found.expiresAt !== null && { exp: Math.floor(found.expiresAt / 1000) }) };
  }
  if (token.split('.').length === 3) {
    const payload = await verifyJwt(db, cache, issuer, token);
    if (isApplicationToken(payload)) {
      throw invalid('has no user subject (a client credentials token cannot be exchanged)');
    }
    return { user: { id: payload.sub }, facts: factsOfJwt(payload) };
  }
  const opaque = await provider.AccessToken.find(token);
  if (!opaque) {
    // Logto's legacy form: an impersonation token sent as an access token.
    const impersonation = await resolveImpersonation(db, token);
    if (impersonation) {
      return impersonation;
    }
    throw invalid('is invalid, expired or revoked');
  }
  if (!opaque.accountId) {
    throw invalid('has no user subject (a client credentials token cannot be exchanged)');
  }
  return { user: { id: opaque.accountId }, facts: factsOfOpaque(opaque) };
}
