/**
 * RFC 9449 at a resource server: a DPoP-bound token (`cnf.jkt`) is good only with a proof, made for
 * this very request, by the key it is bound to — so a copied token is useless without that key.
 * The checks are §4.3's, in its order, with §7.1's error codes: a bad proof is `invalid_dpop_proof`,
 * a proof by another key than the token's is `invalid_token` (as §7.1's example, "Invalid DPoP key binding").
 */
import { createHash } from 'node:crypto';
import { calculateJwkThumbprint, EmbeddedJWK, jwtVerify } from 'jose';

/** Asymmetric only (§4.3 check 5): the identity service's own list, so a key it binds API B accepts. */
export const dpopAlgorithms = ['ES256', 'Ed25519', 'EdDSA'];

/** How old a proof may be: it is made for one request, just before sending it. */
const maxAge = 60;
/** Clocks differ: a proof this many seconds from the future is still taken. */
const clockTolerance = 5;

export class DpopRefused extends Error {
  readonly error: 'invalid_dpop_proof' | 'invalid_token';

  constructor(error: 'invalid_dpop_proof' | 'invalid_token', message: string) {
    super(message);
    this.error = error;
  }
}

/** The request a proof must be for: its method, and its URL as the client reached it. */
export type ProvedRequest = { method: string; url: URL };

/**
 * A checker of proofs that remembers each accepted proof's `jti` while its `iat` is within the
 * window (§11.1): a proof is good once, and after the window its age refuses it anyway.
 */
export function dpopProofChecker() {
  const seen = new Map<string, number>();

  function forget(now: number): void {
    // Entries are added in the order they expire: the expired ones come first.
    for (const [jti, until] of seen) {
      if (until > now) {
        return;
      }
      seen.delete(jti);
    }
  }

  return async function check(
    proof: string | string[] | undefined,
    request: ProvedRequest,
    token: string,
    jkt: string,
  ): Promise<void> {
    const refuse = (message: string) => new DpopRefused('invalid_dpop_proof', message);
    // Node joins repeated headers with a comma, which no JWT holds.
    if (proof === undefined || Array.isArray(proof) || proof.includes(',')) {
      throw refuse('exactly one DPoP proof header is required with the DPoP scheme');
    }
    let verified;
    try {
      verified = await jwtVerify(proof, EmbeddedJWK, {
        typ: 'dpop+jwt',
        algorithms: dpopAlgorithms,
        requiredClaims: ['jti', 'htm', 'htu', 'iat'],
        maxTokenAge: maxAge,
        clockTolerance,
      });
    } catch (error) {
      throw refuse(`DPoP proof: ${(error as Error).message}`);
    }
    const { payload, protectedHeader } = verified;
    if (payload.htm !== request.method) {
      throw refuse('DPoP proof htm is not the method of this request');
    }
    // §4.3 check 9: the URL without query and fragment, compared after URL normalization.
    const htu = typeof payload.htu === 'string' ? URL.parse(payload.htu) : null;
    const expected = new URL(request.url);
    for (const url of [htu, expected]) {
      if (url) {
        url.search = '';
        url.hash = '';
      }
    }
    if (htu?.href !== expected.href) {
      throw refuse('DPoP proof htu is not the URL of this request');
    }
    if (payload.ath !== createHash('sha256').update(token).digest('base64url')) {
      throw refuse('DPoP proof ath is not the hash of the access token sent with it');
    }
    if (!protectedHeader.jwk || (await calculateJwkThumbprint(protectedHeader.jwk)) !== jkt) {
      throw new DpopRefused('invalid_token', "the DPoP proof's key is not the one the token is bound to (cnf.jkt)");
    }
    // Last, so that only a proof good in every other way is remembered.
    const now = Math.floor(Date.now() / 1000);
    forget(now);
    const jti = String(payload.jti);
    if (seen.has(jti)) {
      throw refuse('DPoP proof was used before (its jti)');
    }
    // Until no proof with this jti could pass the age check any more (its iat is at most `clockTolerance` ahead).
    seen.set(jti, now + maxAge + 2 * clockTolerance);
  };
}
