import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, errors as jose, jwtVerify, type JWTPayload } from 'jose';

import { accessTokenTtl } from '../resources/schemas.ts';
import type { Queryable } from '../storage/database.ts';
import type { SharedCache } from '../storage/shared-cache.ts';
import { currentKeySet, type KeySet } from './keys.ts';
import { isRevoked } from './revoked-tokens.ts';

/** The claims every JWT access token of ours carries (RFC 9068; docs/decisions.md, "Tokens"). */
export type AccessTokenClaims = JWTPayload & {
  sub: string;
  client_id: string;
  jti: string;
  iat: number;
  exp: number;
  scope?: unknown;
};

/**
 * Why a token is refused, phrased to follow "the token" (token exchange says `subject_token …`,
 * the management API `Unauthorized: the token …`).
 */
export class AccessTokenRefused extends Error {}

export const clockTolerance = 5;

/** No resource may give its tokens a longer life (resources' `accessTokenTtl` maximum). */
const longestLifetime = (() => {
  const max = accessTokenTtl.maxValue;
  if (max === null) {
    throw new Error('the accessTokenTtl schema sets no maximum');
  }
  return max;
})();

const verifiers = new WeakMap<KeySet, ReturnType<typeof createLocalJWKSet>>();

const verifiedKey = (token: string) => `verified:${token}`;

/** Whether these bytes are a token of ours whose signature was checked (and is being remembered). */
export const isRememberedAccessToken = (cache: SharedCache, token: string): boolean =>
  cache.has('keys', verifiedKey(token));

/**
 * The one check of a JWT access token of ours, for the management API, token exchange's subject
 * tokens and revocation: signed with our keys, our issuer, `typ: at+jwt`, with every claim the
 * provider always sets (`exp`, `iat`, `jti`, `sub`, `client_id`), a lifetime we could have given
 * it, issued in the past, unexpired and not revoked. The audience is the caller's check.
 *
 * A valid token is remembered for exactly these bytes until the keys change (API A exchanges the
 * same user token for each of its calls), so it is decoded and its signature checked once; what
 * depends on the time or on revocation is checked every time, from memory.
 */
export async function verifyAccessToken(
  db: Queryable,
  cache: SharedCache,
  issuer: string,
  token: string,
): Promise<AccessTokenClaims> {
  const claims = await cache.get('keys', verifiedKey(token), () => verifyTokenBytes(db, cache, issuer, token));
  const now = Math.floor(Date.now() / 1000);
  if (claims.exp + clockTolerance <= now) {
    throw new AccessTokenRefused('is expired');
  }
  if (claims.iat - clockTolerance > now) {
    throw new AccessTokenRefused('was issued in the future (iat)');
  }
  if (await isRevoked(db, cache, claims.jti)) {
    throw new AccessTokenRefused('was revoked');
  }
  return claims;
}

async function verifyTokenBytes(
  db: Queryable,
  cache: SharedCache,
  issuer: string,
  token: string,
): Promise<AccessTokenClaims> {
  let typ: string | undefined;
  try {
    typ = decodeProtectedHeader(token).typ;
    decodeJwt(token);
  } catch {
    throw new AccessTokenRefused('is malformed');
  }
  if (typ?.toLowerCase().replace(/^application\//, '') !== 'at+jwt') {
    throw new AccessTokenRefused('is not an access token (its typ is not at+jwt; an ID token cannot be used)');
  }
  const keys = await currentKeySet(db, cache);
  let verifier = verifiers.get(keys);
  if (!verifier) {
    verifier = createLocalJWKSet(keys.publicJwks);
    verifiers.set(keys, verifier);
  }
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(token, verifier, {
      issuer,
      clockTolerance,
      requiredClaims: ['exp', 'iat', 'jti', 'sub', 'client_id'],
    }));
  } catch (error) {
    if (error instanceof jose.JWTExpired) {
      throw new AccessTokenRefused('is expired');
    }
    if (error instanceof jose.JWTClaimValidationFailed && error.claim === 'iss') {
      throw new AccessTokenRefused('was issued by another issuer');
    }
    if (error instanceof jose.JWTClaimValidationFailed && error.reason === 'missing') {
      throw new AccessTokenRefused(`has no ${error.claim} claim (this service always sets one)`);
    }
    if (error instanceof jose.JWSSignatureVerificationFailed || error instanceof jose.JWKSNoMatchingKey) {
      throw new AccessTokenRefused('signature is invalid (not signed by this service)');
    }
    throw new AccessTokenRefused(`is invalid (${(error as Error).message})`);
  }
  const { jti, sub, client_id: clientId, iat, exp } = payload;
  if (typeof jti !== 'string' || typeof sub !== 'string' || typeof clientId !== 'string') {
    throw new AccessTokenRefused('is invalid (jti, sub and client_id must be strings)');
  }
  // jwtVerify checked both are numbers; the compiler does not know that.
  if (typeof exp !== 'number' || typeof iat !== 'number') {
    throw new AccessTokenRefused('is invalid (exp and iat must be numbers)');
  }
  if (exp - iat > longestLifetime) {
    throw new AccessTokenRefused('lives longer than this service issues access tokens for');
  }
  return payload as AccessTokenClaims;
}

/** A token of client credentials has the application as its subject: no user acts through it. */
export const isApplicationToken = (claims: AccessTokenClaims) => claims.sub === claims.client_id;

/** A DPoP-bound token names its key's thumbprint in `cnf.jkt` (RFC 9449 §6). */
export const isDpopBound = (claims: AccessTokenClaims): boolean =>
  typeof claims.cnf === 'object' && claims.cnf !== null && 'jkt' in claims.cnf;

export function audiencesOf(claims: AccessTokenClaims): string[] {
  return typeof claims.aud === 'string' ? [claims.aud] : (claims.aud ?? []);
}

export function scopesOf(claims: AccessTokenClaims): string[] {
  return typeof claims.scope === 'string' ? claims.scope.split(' ').filter(Boolean) : [];
}
