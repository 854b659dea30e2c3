import { createHmac } from 'node:crypto';

import type { HookConfig } from '../schemas.ts';
import { signContent, type Signer, signingKeysAt } from './signing-keys.ts';

/** Headers the service sets itself: a hook's configured headers cannot replace them. */
const reserved = new Set([
  'content-type',
  'content-length',
  'host',
  'transfer-encoding',
  'connection',
  'logto-signature-sha-256',
  'webhook-id',
  'webhook-timestamp',
  'webhook-signature',
]);

export const userAgent = 'identity-service-webhooks/1';

/**
 * Logto's `logto-signature-sha-256` (hex HMAC-SHA256 of the body keyed by the signing key) and the
 * Standard Webhooks trio. `webhook-signature` holds one signature per key that signs now, space
 * separated: `v1,` (HMAC, keyed by the secret's UTF-8 bytes: a receiver verifies with the secret
 * `whsec_` + base64(signingKey)) or `v1a,` (Ed25519, verified with the hook's `whpk_` public key).
 */
export function signatureHeaders(
  { signingKey, keys }: Signer,
  webhookId: string,
  body: string,
  timestamp = Math.floor(Date.now() / 1000),
) {
  const content = `${webhookId}.${timestamp}.${body}`;
  return {
    'logto-signature-sha-256': createHmac('sha256', Buffer.from(signingKey, 'utf8')).update(body).digest('hex'),
    'webhook-id': webhookId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signingKeysAt(keys, Date.now())
      .map((key) => signContent(key, content))
      .join(' '),
  };
}

/** A request's headers: the hook's own, then ours (JSON, signatures), fresh timestamp per attempt. */
export function requestHeaders(
  config: HookConfig,
  signer: Signer,
  webhookId: string,
  body: string,
): Record<string, string> {
  const custom = Object.entries(config.headers ?? {}).filter(([name]) => !reserved.has(name.toLowerCase()));
  return {
    'user-agent': userAgent,
    ...Object.fromEntries(custom.map(([name, value]) => [name.toLowerCase(), value])),
    'content-type': 'application/json',
    ...signatureHeaders(signer, webhookId, body),
  };
}
