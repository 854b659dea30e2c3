import { createHash } from 'node:crypto';

import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, errors as jose, jwtVerify, type JWTPayload } from 'jose';
import { errors, type Provider } from 'oidc-provider';

import type { Queryable } from '../../storage/database.ts';
import type { SharedCache } from '../../storage/shared-cache.ts';
import { currentKeySet, type KeySet } from '../keys.ts';

export const accessTokenType = 'urn:ietf:params:oauth:token-type:access_token';
export const impersonationTokenType = 'urn:logto:token-type:impersonation_token';

/** Who a valid subject token speaks for, and who acts for them (impersonation). */
export type Subject = { userId: string; actor?: string; impersonationTokenId?: string };

const invalid = (description: string) => new errors.InvalidRequest(`subject_token ${description}`);

const verifiers = new WeakMap<KeySet, ReturnType<typeof createLocalJWKSet>>();

/** A JWT access token of ours: signed with our keys, our issuer, `typ: at+jwt`, unexpired, for a user. */
async function verifyJwt(db: Queryable, cache: SharedCache, issuer: string, token: string): Promise<JWTPayload> {
  let typ: string | undefined;
  try {
    typ = decodeProtectedHeader(token).typ;
    decodeJwt(token);
  } catch {
    throw invalid('is malformed');
  }
  if (typ?.toLowerCase().replace(/^application\//, '') !== 'at+jwt') {
    throw invalid('is not an access token (its typ is not at+jwt; an ID token cannot be exchanged)');
  }
  // API A exchanges the same user token for each of its calls: a signature checked once stays
  // checked, for exactly these bytes, until the keys change (the `keys` cache drops it then).
  const payload = await cache.get('keys', `verified:${token}`, () => verifySignature(db, cache, issuer, token));
  if (typeof payload.exp === 'number' && payload.exp + clockTolerance <= Math.floor(Date.now() / 1000)) {
    throw invalid('is expired');
  }
  return payload;
}

const clockTolerance = 5;

async function verifySignature(db: Queryable, cache: SharedCache, issuer: string, token: string): Promise<JWTPayload> {
  const keys = await currentKeySet(db, cache);
  let verifier = verifiers.get(keys);
  if (!verifier) {
    verifier = createLocalJWKSet(keys.publicJwks);
    verifiers.set(keys, verifier);
  }
  try {
    const { payload } = await jwtVerify(token, verifier, { issuer, clockTolerance });
    return payload;
  } catch (error) {
    if (error instanceof jose.JWTExpired) {
      throw invalid('is expired');
    }
    if (error instanceof jose.JWTClaimValidationFailed && error.claim === 'iss') {
      throw invalid('was issued by another issuer');
    }
    if (error instanceof jose.JWSSignatureVerificationFailed || error instanceof jose.JWKSNoMatchingKey) {
      throw invalid('signature is invalid (not signed by this service)');
    }
    throw invalid(`is invalid (${(error as Error).message})`);
  }
}

export const hashSubjectToken = (token: string) => createHash('sha256').update(token).digest('hex');

type ImpersonationRow = { id: string; user_id: string; application_id: string | null; expires_at: number; consumed_at: number | null };

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
    const row = await db('subject_tokens').where({ token_hash: hashSubjectToken(token) }).first<ImpersonationRow | undefined>();
    if (!row) {
      throw invalid('is not a valid impersonation token');
    }
    if (row.consumed_at !== null) {
      throw invalid('was already used (an impersonation token is single use)');
    }
    if (Number(row.expires_at) <= Date.now()) {
      throw invalid('is expired');
    }
    return { userId: row.user_id, actor: row.application_id ?? undefined, impersonationTokenId: row.id };
  }
  if (token.split('.').length === 3) {
    const payload = await verifyJwt(db, cache, issuer, token);
    // A client credentials token has the application as its subject: there is no user to act for.
    if (!payload.sub || payload.sub === payload.client_id) {
      throw invalid('has no user subject (a client credentials token cannot be exchanged)');
    }
    return { userId: payload.sub };
  }
  const opaque = await provider.AccessToken.find(token);
  if (!opaque) {
    throw invalid('is invalid, expired or revoked');
  }
  if (!opaque.accountId) {
    throw invalid('has no user subject (a client credentials token cannot be exchanged)');
  }
  return { userId: opaque.accountId };
}

/** Marks an impersonation token used; false when another exchange used it first. */
export async function consumeImpersonationToken(db: Queryable, id: string): Promise<boolean> {
  return (await db('subject_tokens').where({ id }).whereNull('consumed_at').update({ consumed_at: Date.now() })) === 1;
}
