import { createCipheriv, createHash, pbkdf2, scrypt, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import argon2 from 'argon2';
import bcrypt from 'bcryptjs';
import { z } from 'zod';

import { RequestError } from '../http/errors.ts';

/**
 * The digests people bring when they move their users in, by Logto's names
 * (`UsersPasswordEncryptionMethod`). Ours are Argon2id; any other is checked here at the next
 * sign-in and then replaced by ours (users.ts, `verifyUserPassword`).
 */
export const passwordAlgorithms = [
  'Argon2i',
  'Argon2id',
  'Argon2d',
  'SHA1',
  'SHA256',
  'MD5',
  'Bcrypt',
  'Legacy',
] as const;
export type PasswordAlgorithm = (typeof passwordAlgorithms)[number];

/** The algorithm of the digests this service makes. */
export const ownAlgorithm: PasswordAlgorithm = 'Argon2id';

/** Digests a wrong password is told from much faster than from ours: a failure pays a decoy Argon2 check too. */
export const fastAlgorithms: ReadonlySet<string> = new Set(['SHA1', 'SHA256', 'MD5', 'Legacy']);

/**
 * Logto's "Legacy" digest: a JSON triple `[algorithm, args, expected]`. For a hash algorithm of
 * node:crypto, `args` joined (the password for each `"@"`) are hashed to `expected` in hex; for
 * `pbkdf2`, args are `[salt ("hex:" + hex, or text), iterations, key length, digest]`; for
 * `firebase-scrypt`, `[salt, signer key, salt separator, rounds, memory cost]` (base64) and
 * `expected` is base64.
 */
const legacyTriple = z.tuple([
  z.string(),
  z.array(z.string()).refine((args) => args.includes('@'), "the arguments must hold '@', the password"),
  z.string(),
]);
type Legacy = { algorithm: string; args: string[]; expected: string };

/** Limits on what an imported digest may make a sign-in compute. */
const maxPbkdf2Iterations = 10_000_000;
const maxPbkdf2KeyLength = 1024;
const maxScryptMemCost = 16;
const maxScryptRounds = 16;

const isPbkdf2 = (algorithm: string) => algorithm === 'pbkdf2' || algorithm === 'pbkdf2Sync';
const isFirebaseScrypt = (algorithm: string) => algorithm === 'firebase-scrypt';

/** Whatever node:crypto hashes (`openssl list -digest-algorithms`), in any case. */
const isHashAlgorithm = (name: string) => {
  try {
    createHash(name);
    return true;
  } catch {
    return false;
  }
};

const invalidLegacy = () => new RequestError('password.invalid_legacy_password_format');

function pbkdf2Parameters(args: string[]): { salt: Buffer; iterations: number; keyLength: number; digest: string } {
  const [salt, iterations, keyLength, digest] = args;
  if (!salt || !iterations || !keyLength || !digest || !isHashAlgorithm(digest)) {
    throw invalidLegacy();
  }
  const hex = salt.startsWith('hex:') ? salt.slice(4) : undefined;
  if (hex !== undefined && !/^(?:[\da-f]{2})+$/i.test(hex)) {
    throw invalidLegacy();
  }
  const rounds = Number(iterations);
  const length = Number(keyLength);
  if (!Number.isInteger(rounds) || rounds < 1 || rounds > maxPbkdf2Iterations) {
    throw invalidLegacy();
  }
  if (!Number.isInteger(length) || length < 1 || length > maxPbkdf2KeyLength) {
    throw invalidLegacy();
  }
  return {
    salt: hex === undefined ? Buffer.from(salt) : Buffer.from(hex, 'hex'),
    iterations: rounds,
    keyLength: length,
    digest,
  };
}

function scryptParameters(args: string[]) {
  const [salt, signerKey, separator, rounds, memCost] = args;
  const r = Number(rounds);
  const cost = Number(memCost);
  if (!salt || !signerKey || !separator || !Number.isInteger(r) || !Number.isInteger(cost)) {
    throw invalidLegacy();
  }
  if (r < 1 || r > maxScryptRounds || cost < 1 || cost > maxScryptMemCost) {
    throw invalidLegacy();
  }
  // Firebase's exports use standard base64, its Admin SDK the URL-safe alphabet: both are read.
  const decode = (value: string) => Buffer.from(value.replaceAll('-', '+').replaceAll('_', '/'), 'base64');
  return { salt: Buffer.concat([decode(salt), decode(separator)]), signerKey: decode(signerKey), r, cost };
}

/** The Legacy triple, refused with Logto's codes (400) when it cannot be checked: at import, not at sign-in. */
export function parseLegacyDigest(digest: string): Legacy {
  let json: unknown;
  try {
    json = JSON.parse(digest);
  } catch {
    throw invalidLegacy();
  }
  const parsed = legacyTriple.safeParse(json);
  if (!parsed.success) {
    throw invalidLegacy();
  }
  const [algorithm, args, expected] = parsed.data;
  if (isPbkdf2(algorithm)) {
    pbkdf2Parameters(args.map((arg) => (arg === '@' ? 'password' : arg)));
  } else if (isFirebaseScrypt(algorithm)) {
    scryptParameters(args.map((arg) => (arg === '@' ? 'password' : arg)));
  } else if (!isHashAlgorithm(algorithm)) {
    throw new RequestError('password.unsupported_legacy_hash_algorithm', { algorithm });
  }
  return { algorithm, args, expected };
}

const pbkdf2Async = promisify(pbkdf2);
const scryptAsync = promisify(scrypt) as (
  password: string,
  salt: Buffer,
  length: number,
  options: { N: number; r: number; p: number; maxmem: number },
) => Promise<Buffer>;

async function legacyHash({ algorithm, args }: Legacy, password: string): Promise<string> {
  const resolved = args.map((arg) => (arg === '@' ? password : arg));
  if (isPbkdf2(algorithm)) {
    const { salt, iterations, keyLength, digest } = pbkdf2Parameters(resolved);
    return (await pbkdf2Async(password, salt, iterations, keyLength, digest)).toString('hex');
  }
  if (isFirebaseScrypt(algorithm)) {
    const { salt, signerKey, r, cost } = scryptParameters(args);
    const key = await scryptAsync(password, salt, 32, { N: 2 ** cost, r, p: 1, maxmem: 256 * 2 ** cost * r });
    // Firebase encrypts its project's signer key with the derived key: the zero IV is its scheme's.
    const cipher = createCipheriv('aes-256-ctr', key, Buffer.alloc(16, 0));
    return Buffer.concat([cipher.update(signerKey), cipher.final()]).toString('base64');
  }
  return createHash(algorithm).update(resolved.join('')).digest('hex');
}

const sameText = (a: string, b: string) => {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
};

const hexOf = (algorithm: 'md5' | 'sha1' | 'sha256', password: string) =>
  createHash(algorithm).update(password).digest('hex');

/** Whether `password` is the one `digest` was made from; a digest that cannot be read matches nothing. */
export async function digestMatches(algorithm: string, digest: string, password: string): Promise<boolean> {
  try {
    switch (algorithm) {
      case 'Argon2i':
      case 'Argon2id':
      case 'Argon2d': {
        return await argon2.verify(digest, password);
      }
      case 'MD5': {
        return sameText(hexOf('md5', password), digest.toLowerCase());
      }
      case 'SHA1': {
        return sameText(hexOf('sha1', password), digest.toLowerCase());
      }
      case 'SHA256': {
        return sameText(hexOf('sha256', password), digest.toLowerCase());
      }
      case 'Bcrypt': {
        return await bcrypt.compare(password, digest);
      }
      case 'Legacy': {
        const legacy = parseLegacyDigest(digest);
        return sameText(await legacyHash(legacy, password), legacy.expected);
      }
      default: {
        return false;
      }
    }
  } catch {
    return false;
  }
}
