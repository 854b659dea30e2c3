import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

import { ConfigError } from '../config/env.ts';

/** SECRETS_ENCRYPTION_KEY (`current`) and SECRETS_ENCRYPTION_OLD_KEYS (`old`), 32 bytes each. */
export type SecretKeys = { current?: Buffer; old: Buffer[] };

/**
 * `enc:v1:<key id>:<nonce>:<ciphertext and tag>`, base64url. Only a value of exactly this shape is
 * taken as sealed: anything else is plaintext written before a key was set.
 */
const envelope = /^enc:v1:([\w-]{11}):([\w-]{16}):([\w-]{22,})$/;
const tagLength = 16;

/** Names a key without revealing it: the first 8 bytes of its SHA-256 (11 characters). */
export const keyIdOf = (key: Buffer): string =>
  createHash('sha256').update(key).digest().subarray(0, 8).toString('base64url');

/** The key id a stored value was sealed with; undefined for plaintext. */
export const sealedWith = (stored: string): string | undefined => envelope.exec(stored)?.[1];

export const missingKeyMessage = (keyId: string) =>
  `SECRETS_ENCRYPTION_KEY: secrets in the database are encrypted with a key this process was not given (key id ${keyId}); ` +
  'set it as SECRETS_ENCRYPTION_KEY, or in SECRETS_ENCRYPTION_OLD_KEYS while rotating';

/**
 * Seals and opens secrets stored in the database with AES-256-GCM. The place a value is stored
 * (its table, column and row id) is bound in as additional data, so a sealed value copied to
 * another row or column does not open there.
 */
export class SecretBox {
  readonly #keys = new Map<string, Buffer>();
  /** The key that seals; undefined: values are written in plaintext. */
  readonly currentKeyId: string | undefined;
  readonly #current: { id: string; key: Buffer } | undefined;

  constructor({ current, old }: SecretKeys) {
    for (const key of [...old, ...(current ? [current] : [])]) {
      this.#keys.set(keyIdOf(key), key);
    }
    this.#current = current && { id: keyIdOf(current), key: current };
    this.currentKeyId = this.#current?.id;
  }

  holds(keyId: string): boolean {
    return this.#keys.has(keyId);
  }

  seal(value: string, place: string): string {
    if (!this.#current) {
      return value;
    }
    const { id, key } = this.#current;
    const nonce = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, nonce, {
      authTagLength: tagLength,
    });
    cipher.setAAD(Buffer.from(place, 'utf8'));
    const sealed = Buffer.concat([cipher.update(value, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return `enc:v1:${id}:${nonce.toString('base64url')}:${sealed.toString('base64url')}`;
  }

  open(stored: string, place: string): string {
    const match = envelope.exec(stored);
    if (!match) {
      return stored;
    }
    const [, keyId, nonce, sealed] = match as unknown as [string, string, string, string];
    const key = this.#keys.get(keyId);
    if (!key) {
      throw new ConfigError(missingKeyMessage(keyId));
    }
    const bytes = Buffer.from(sealed, 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(nonce, 'base64url'), {
      authTagLength: tagLength,
    });
    decipher.setAAD(Buffer.from(place, 'utf8'));
    decipher.setAuthTag(bytes.subarray(bytes.length - tagLength));
    try {
      return Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - tagLength)), decipher.final()]).toString(
        'utf8',
      );
    } catch {
      // The place is a table, column and row id: safe to name, and what an operator needs.
      throw new Error(`the encrypted secret at ${place} does not open: it was altered or moved from another row`);
    }
  }

  /** Whether a stored value is as this box would write it now (sealed with the current key, or plaintext without one). */
  isCurrent(stored: string): boolean {
    return sealedWith(stored) === this.currentKeyId;
  }
}
