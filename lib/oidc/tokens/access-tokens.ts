import { createHash } from 'node:crypto';
import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, errors as jose, type JWTPayload, jwtVerify } from 'jose';

import { accessTokenTtl } from '../../resources/schemas.ts';
import { BoundedCache } from '../../storage/bounded-cache.ts';
import type { Queryable } from '../../storage/database.ts';
import type { SharedCache } from '../../storage/shared-cache.ts';
import { currentKeySet, type KeySet } from '../keys/keys.ts';
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

/**
 * Tokens of ours whose signature was checked, per instance (one SharedCache each): bounded by count
 * and by bytes, since a caller chooses how large the bytes it sends are. An entry is keyed by the
 * version of the keys it was checked with, so a change of keys checks every token again (the old
 * entries are the least recently used ones and go first), and by the token's digest, not its bytes,
 * which are not kept in memory at all.
 */
const rememberedLimits = { maxEntries: 50_000, maxBytes: 32 * 1024 * 1024 };
const rememberedByCache = new WeakMap<SharedCache, BoundedCache<Promise<AccessTokenClaims>>>();

function rememberedOf(cache: SharedCache): BoundedCache<Promise<AccessTokenClaims>> {
  let remembered = rememberedByCache.get(cache);
  if (!remembered) {
    remembered = new BoundedCache(rememberedLimits);
    rememberedByCache.set(cache, remembered);
  }
  return remembered;
}

const rememberedKey = (cache: SharedCache, token: string) =>
  `${cache.version('keys')}:${createHash('sha256').update(token).digest('base64url')}`;

/** Whether these bytes are a token of ours whose signature was checked (and is being remembered). */
export const isRememberedAccessToken = (cache: SharedCache, token: string): boolean =>
  rememberedOf(cache).get(rememberedKey(cache, token)) !== undefined;

/**
 * The one check of a JWT access token of ours, for the management API, token exchange's subject
 * tokens and revocation: signed with our keys, our issuer, `typ: at+jwt`, with every claim the
 * provider always sets (`exp`, `iat`, `jti`, `sub`, `client_id`), a lifetime we could have given
 * it, issued in the past, unexpired and not revoked. The audience is the caller's check.
 *
 * A valid token is remembered for exactly these bytes until the keys change (API A exchanges the
 * same user token for each of its calls), so it is decoded and its signature checked once; what
 * depends on the time or on revocation is checked every time, from memory, and the user's state by
 * the caller through the `users` cache version. It is never remembered past its own `exp`: the
 * first use after that forgets it (and it is checked again when the keys change).
 */
export async function verifyAccessToken(
  db: Queryable,
  cache: SharedCache,
  issuer: string,
  token: string,
): Promise<AccessTokenClaims> {
  const remembered = rememberedOf(cache);
  const key = rememberedKey(cache, token);
  let pending = remembered.get(key);
  if (!pending) {
    pending = verifyTokenBytes(db, cache, issuer, token);
    // The key and the claims, which are no larger than the token that carries them.
    remembered.set(key, pending, key.length + token.length);
    pending.catch(() => remembered.delete(key));
  }
  const claims = await pending;
  const now = Math.floor(Date.now() / 1000);
  if (claims.exp + clockTolerance <= now) {
    remembered.delete(key);
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
