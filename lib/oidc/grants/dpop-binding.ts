import { calculateJwkThumbprint, EmbeddedJWK, jwtVerify } from 'jose';
import { errors, type KoaContextWithOIDC } from 'oidc-provider';

/** The provider's defaults (`dPoPSigningAlgValues`), which discovery advertises. */
const algorithms = ['ES256', 'Ed25519', 'EdDSA'];
/** As the provider's own DPoP check: a proof without a nonce is good for five minutes either side. */
const proofWindow = 300;

/**
 * RFC 9449 §4.3 at the token endpoint, for our grant (the provider checks proofs for its own grants
 * only): the `DPoP` header, if any, is a fresh, unreplayed proof for this request; the answer is its
 * key's thumbprint (`jkt`), undefined without a header (Bearer, the default).
 */
export async function dpopProofKey(ctx: KoaContextWithOIDC): Promise<string | undefined> {
  const proof = ctx.get('DPoP');
  if (!proof) {
    return undefined;
  }
  let verified;
  try {
    verified = await jwtVerify(proof, EmbeddedJWK, { algorithms, typ: 'dpop+jwt' });
  } catch {
    throw new errors.InvalidDpopProof('invalid DPoP key binding');
  }
  const { payload, protectedHeader } = verified;
  if (!protectedHeader.jwk) {
    throw new errors.InvalidDpopProof('DPoP proof must carry its public key (jwk)');
  }
  if (typeof payload.jti !== 'string' || payload.jti === '') {
    throw new errors.InvalidDpopProof('DPoP proof must have a jti string property');
  }
  if (typeof payload.iat !== 'number' || Math.abs(Math.floor(Date.now() / 1000) - payload.iat) > proofWindow) {
    throw new errors.InvalidDpopProof('DPoP proof iat is not recent enough');
  }
  if (payload.htm !== ctx.method) {
    throw new errors.InvalidDpopProof('DPoP proof htm mismatch');
  }
  const htu = typeof payload.htu === 'string' ? URL.parse(payload.htu) : null;
  if (htu) {
    htu.hash = '';
    htu.search = '';
  }
  if (htu?.href !== new URL(ctx.oidc.urlFor('token')).href) {
    throw new errors.InvalidDpopProof('DPoP proof htu mismatch');
  }
  const { provider, client } = ctx.oidc;
  const fresh = await provider.ReplayDetection.unique(
    client?.clientId ?? '',
    payload.jti,
    Math.floor(Date.now() / 1000) + proofWindow,
  );
  if (!fresh) {
    throw new errors.InvalidDpopProof('DPoP proof JWT Replay detected');
  }
  return calculateJwkThumbprint(protectedHeader.jwk);
}

/**
 * A token bound to a DPoP key (`cnf.jkt`) may be used only by a request proving that key: the
 * subject or actor token of an exchange (refused as `invalid_request`), a JWT bearer grant's
 * assertion (refused as `invalid_grant`, RFC 7523 §3.1).
 */
export function assertProofOfKey(
  parameter: 'subject_token' | 'actor_token' | 'assertion',
  boundTo: string | undefined,
  proofKey: string | undefined,
  refusal: (description: string) => Error = (description) => new errors.InvalidRequest(description),
): void {
  if (boundTo === undefined) {
    return;
  }
  if (proofKey === undefined) {
    throw refusal(`${parameter} is DPoP-bound: send a DPoP proof of its key (cnf.jkt)`);
  }
  if (proofKey !== boundTo) {
    throw refusal(`${parameter} is DPoP-bound to another key than the DPoP proof's`);
  }
}
