import { randomBytes } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK } from 'jose';
import type { Knex } from 'knex';

import { longestIdTokenTtl } from '../../applications/schemas.ts';
import { longestAccessTokenTtl } from '../../resources/queries.ts';
import type { Queryable } from '../../storage/database.ts';
import { bumpCacheVersion, lockCache, type SharedCache } from '../../storage/shared-cache.ts';
import { withTransaction } from '../../storage/transaction.ts';
import {
  deleteKeyRow,
  deleteKeysRetiredBy,
  findKeyState,
  insertKeys,
  type KeyKind,
  type KeyRow,
  keysInUse,
  listKeysOfKind,
  loadKeyRows,
  type NewKey,
  retireKeys,
  signingJwkOf,
  type SigningKeyAlgorithm,
} from './key-queries.ts';

export type { KeyKind, SigningKeyAlgorithm } from './key-queries.ts';

export type KeySet = {
  /** Private JWKs, the key in use for each algorithm first, then retired keys still published. */
  signing: JWK[];
  /** Public halves of `signing`, for verifying our own tokens locally. */
  publicJwks: { keys: JWK[] };
  /** Cookie signing keys, newest first (the first signs, all verify). */
  cookieKeys: string[];
};

const jwsAlgorithm: Record<SigningKeyAlgorithm, string> = { EC: 'ES256', RSA: 'RS256' };

async function newSigningKey(algorithm: SigningKeyAlgorithm): Promise<NewKey> {
  const alg = jwsAlgorithm[algorithm];
  const { privateKey } = await generateKeyPair(alg, { extractable: true });
  const jwk = await exportJWK(privateKey);
  const kid = await calculateJwkThumbprint(jwk);
  return { id: kid, kind: 'private-keys', algorithm, value: JSON.stringify({ ...jwk, kid, alg, use: 'sig' }) };
}

function newCookieKey(): NewKey {
  return {
    id: randomBytes(12).toString('base64url'),
    kind: 'cookie-keys',
    algorithm: null,
    value: randomBytes(32).toString('base64url'),
  };
}

async function retention(db: Queryable): Promise<number> {
  // A retired key stays published until every token it signed has expired (an application's ID tokens may live a day).
  return Math.max(longestIdTokenTtl, await longestAccessTokenTtl(db)) * 1000;
}

type Wanted = { kind: KeyKind; algorithm: SigningKeyAlgorithm | null };
const wanted: Wanted[] = [
  { kind: 'private-keys', algorithm: 'EC' },
  { kind: 'private-keys', algorithm: 'RSA' },
  { kind: 'cookie-keys', algorithm: null },
];

async function missingKeys(db: Queryable): Promise<Wanted[]> {
  const present = await keysInUse(db);
  return wanted.filter(
    ({ kind, algorithm }) => !present.some((row) => row.kind === kind && row.algorithm === algorithm),
  );
}

/**
 * First start: one EC and one RSA signing key, and a cookie key. Safe when instances start
 * together: keys are generated before the lock is taken (RSA generation is slow), and only the
 * first instance's are stored.
 */
export async function ensureKeys(db: Knex): Promise<void> {
  const missing = await missingKeys(db);
  if (missing.length === 0) {
    return;
  }
  const candidates = await Promise.all(
    missing.map(({ kind, algorithm }) =>
      kind === 'cookie-keys' ? Promise.resolve(newCookieKey()) : newSigningKey(algorithm ?? 'EC'),
    ),
  );
  await withTransaction(db, async (trx) => {
    await lockCache(trx, 'keys');
    const stillMissing = await missingKeys(trx);
    const rows = candidates.filter((key) =>
      stillMissing.some(({ kind, algorithm }) => key.kind === kind && key.algorithm === algorithm),
    );
    if (rows.length > 0) {
      await insertKeys(trx, rows, Date.now());
      await bumpCacheVersion(trx, 'keys');
    }
  });
}

async function loadKeySet(db: Queryable): Promise<KeySet> {
  const window = await retention(db);
  // Opened once per load into the cache: signing never decrypts.
  const rows = await loadKeyRows(db, Date.now() - window);
  const signing: JWK[] = rows.filter((row) => row.kind === 'private-keys').map((row) => signingJwkOf(row.value));
  return {
    signing,
    publicJwks: {
      keys: signing.map(({ kty, crv, x, y, n, e, kid, alg, use }) => ({ kty, crv, x, y, n, e, kid, alg, use })),
    },
    cookieKeys: rows.filter((row) => row.kind === 'cookie-keys').map((row) => row.value),
  };
}

export const currentKeySet = (db: Queryable, cache: SharedCache) => cache.get('keys', 'all', () => loadKeySet(db));

export type KeySummary = { id: string; createdAt: number; signingKeyAlgorithm?: SigningKeyAlgorithm; retired: boolean };

const summary = (row: Omit<KeyRow, 'value'>): KeySummary => ({
  id: row.id,
  createdAt: row.created_at,
  ...(row.algorithm && { signingKeyAlgorithm: row.algorithm }),
  retired: row.rotated_at !== null,
});

/** The keys of a kind that are still in use or published, newest first. */
export async function listKeys(db: Queryable, kind: KeyKind): Promise<KeySummary[]> {
  const window = await retention(db);
  const rows = await listKeysOfKind(db, kind, Date.now() - window);
  return rows.map(summary);
}

/**
 * A new key takes over signing; the one it replaces stays published (verifiable) until tokens it
 * signed have expired, then it is pruned.
 */
export async function rotateKey(db: Queryable, kind: KeyKind, algorithm: SigningKeyAlgorithm): Promise<void> {
  await withTransaction(db, async (trx) => {
    await lockCache(trx, 'keys');
    const now = Date.now();
    await retireKeys(trx, kind, algorithm, now);
    const key = kind === 'private-keys' ? await newSigningKey(algorithm) : newCookieKey();
    await insertKeys(trx, [key], now);
    await pruneRetiredKeys(trx);
    await bumpCacheVersion(trx, 'keys');
  });
}

export async function pruneRetiredKeys(db: Queryable): Promise<number> {
  const window = await retention(db);
  return deleteKeysRetiredBy(db, Date.now() - window);
}

/** Removes a retired key now (e.g. one that leaked). The key in use cannot be removed: rotate first. */
export async function deleteKey(db: Queryable, kind: KeyKind, id: string): Promise<'deleted' | 'not-found' | 'in-use'> {
  return withTransaction(db, async (trx) => {
    await lockCache(trx, 'keys');
    const state = await findKeyState(trx, kind, id);
    if (!state) {
      return 'not-found';
    }
    if (state === 'in-use') {
      return 'in-use';
    }
    await deleteKeyRow(trx, kind, id);
    await bumpCacheVersion(trx, 'keys');
    return 'deleted';
  });
}
