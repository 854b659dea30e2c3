import { createRemoteJWKSet, type JWTPayload, jwtVerify } from 'jose';

/** How an ID token from explicitly configured endpoints is checked (Logto's `idTokenVerificationConfig`). */
export type IdTokenChecks = {
  jwksUri: string;
  clientId: string;
  nonce: string;
  /** The issuer(s) the token must name; without one, any issuer the keys sign for (as Logto). */
  issuer?: string | string[];
  algorithms?: string[];
  /** Seconds, or jose's spans ("30s"); 30 s when not set, as for IdPs found by discovery. */
  clockTolerance?: number | string;
  maxTokenAge?: number | string;
};

const jwksTimeoutMs = 10_000;

// An IdP's key set is fetched once and refreshed by jose when a token names a key it does not hold.
const keySets = new Map<string, ReturnType<typeof createRemoteJWKSet>>();

function keySetOf(jwksUri: string): ReturnType<typeof createRemoteJWKSet> {
  let keySet = keySets.get(jwksUri);
  if (!keySet) {
    if (keySets.size >= 100) {
      keySets.clear();
    }
    keySet = createRemoteJWKSet(new URL(jwksUri), { timeoutDuration: jwksTimeoutMs });
    keySets.set(jwksUri, keySet);
  }
  return keySet;
}

/**
 * The ID token's claims once its signature (by a key of `jwksUri`), audience (the client id),
 * expiry, issuer (where configured) and nonce (this sign-in's) are checked. Throws otherwise.
 */
export async function verifyIdToken(idToken: string, checks: IdTokenChecks): Promise<JWTPayload> {
  const { payload } = await jwtVerify(idToken, keySetOf(checks.jwksUri), {
    audience: checks.clientId,
    issuer: checks.issuer,
    algorithms: checks.algorithms,
    clockTolerance: checks.clockTolerance ?? 30,
    maxTokenAge: checks.maxTokenAge,
    requiredClaims: ['iss', 'sub', 'exp', 'iat'],
  });
  // The sign-in sent a nonce: the token must carry it back (OpenID Connect Core 3.1.3.7).
  if (payload.nonce !== checks.nonce) {
    throw new Error('the ID token does not carry the nonce this sign-in sent');
  }
  return payload;
}
