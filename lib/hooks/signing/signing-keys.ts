import { createHash, createHmac, createPrivateKey, generateKeyPairSync, type KeyObject, sign } from 'node:crypto';

import { generateSecret } from '../../storage/ids.ts';

export const signatureSchemes = ['hmac-sha256', 'ed25519'] as const;
export type SignatureScheme = (typeof signatureSchemes)[number];

/** A key a hook signs with: its HMAC secret, or an Ed25519 private key (a JWK, as JSON). */
export type SigningKey = { scheme: 'hmac-sha256'; secret: string } | { scheme: 'ed25519'; privateJwk: string };

/**
 * What a hook signs with: the key of its scheme and, for a while after a rotation (or a change of
 * scheme), the one before it, so receivers can move to the new key without refusing a delivery.
 */
export type HookKeys = { current: SigningKey; previous?: SigningKey; previousUntil?: number };

/** The `logto-signature-sha-256` secret (Logto's `signingKey`, kept whatever the scheme) and the keys. */
export type Signer = { signingKey: string; keys: HookKeys };

type Ed25519Jwk = { kty: 'OKP'; crv: 'Ed25519'; x: string; d: string };

export function newEd25519Key(): string {
  const { privateKey } = generateKeyPairSync('ed25519');
  return JSON.stringify(privateKey.export({ format: 'jwk' }));
}

/** The key of `scheme` for a hook whose HMAC secret is `secret`: an Ed25519 key is new. */
export const keyFor = (scheme: SignatureScheme, secret: string): SigningKey =>
  scheme === 'ed25519' ? { scheme, privateJwk: newEd25519Key() } : { scheme, secret };

/** The HMAC signer Logto's hooks have: one secret for both headers. */
export const hmacSigner = (signingKey: string): Signer => ({
  signingKey,
  keys: { current: { scheme: 'hmac-sha256', secret: signingKey } },
});

const rawPublicKey = (key: Extract<SigningKey, { scheme: 'ed25519' }>) =>
  Buffer.from((JSON.parse(key.privateJwk) as Ed25519Jwk).x, 'base64url');

/** Standard Webhooks' form of an Ed25519 public key: `whpk_` + base64 of its 32 raw bytes. */
export const publicKeyOf = (key: Extract<SigningKey, { scheme: 'ed25519' }>): string =>
  `whpk_${rawPublicKey(key).toString('base64')}`;

/** The public JWK of an Ed25519 key, named by its RFC 7638 thumbprint. */
export function publicJwkOf(key: Extract<SigningKey, { scheme: 'ed25519' }>) {
  const x = rawPublicKey(key).toString('base64url');
  const kid = createHash('sha256')
    .update(JSON.stringify({ crv: 'Ed25519', kty: 'OKP', x }))
    .digest('base64url');
  return { kty: 'OKP', crv: 'Ed25519', x, kid, alg: 'EdDSA', use: 'sig' };
}

/** The keys that sign at `now`: the current one first, then the previous one during its overlap. */
export const signingKeysAt = (keys: HookKeys, now: number): SigningKey[] =>
  keys.previous && (keys.previousUntil ?? 0) > now ? [keys.current, keys.previous] : [keys.current];

/**
 * Private keys parsed once, not per delivery (parsing a JWK costs several times the signature): a
 * handful of hooks sign most deliveries. Emptied when it grows past any plausible number of hooks.
 */
const parsedKeys = new Map<string, KeyObject>();

function privateKeyOf(privateJwk: string): KeyObject {
  let key = parsedKeys.get(privateJwk);
  if (!key) {
    if (parsedKeys.size >= 1024) {
      parsedKeys.clear();
    }
    key = createPrivateKey({ key: JSON.parse(privateJwk) as Ed25519Jwk, format: 'jwk' });
    parsedKeys.set(privateJwk, key);
  }
  return key;
}

/** One Standard Webhooks signature of `content` (`id.timestamp.body`): `v1,` HMAC or `v1a,` Ed25519, base64. */
export function signContent(key: SigningKey, content: string): string {
  if (key.scheme === 'hmac-sha256') {
    return `v1,${createHmac('sha256', Buffer.from(key.secret, 'utf8')).update(content).digest('base64')}`;
  }
  return `v1a,${sign(null, Buffer.from(content, 'utf8'), privateKeyOf(key.privateJwk)).toString('base64')}`;
}

/**
 * The keys after a rotation or a change of scheme: a new HMAC secret on rotation (Logto's
 * `signingKey` is always replaced there), a new Ed25519 key when the scheme is Ed25519, and the key
 * that signed until now kept signing for `overlapMs` (none with 0). A key still in its overlap
 * from an earlier rotation is dropped: deliveries carry two signatures at most.
 */
export function rotatedKeys(
  signer: Signer,
  scheme: SignatureScheme,
  { rotate, now, overlapMs }: { rotate: boolean; now: number; overlapMs: number },
): Signer {
  const signingKey = rotate ? generateSecret() : signer.signingKey;
  const current = keyFor(scheme, signingKey);
  const previous = signer.keys.current;
  return {
    signingKey,
    keys: overlapMs > 0 ? { current, previous, previousUntil: now + overlapMs } : { current },
  };
}
