import { randomBytes } from 'node:crypto';

import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK } from 'jose';
import type { Knex } from 'knex';

import type { Queryable } from '../storage/database.ts';
import { openSecret, sealSecret, sealedColumns } from '../storage/sealed-columns.ts';
import { bumpCacheVersion, lockCache, type SharedCache } from '../storage/shared-cache.ts';
import { withTransaction } from '../storage/transaction.ts';

export type KeyKind = 'private-keys' | 'cookie-keys';
export type SigningKeyAlgorithm = 'EC' | 'RSA';

type KeyRow = {
  id: string;
  kind: KeyKind;
  algorithm: SigningKeyAlgorithm | null;
  value: string;
  created_at: number;
  rotated_at: number | null;
};

export type KeySet = {
  /** Private JWKs, the key in use for each algorithm first, then retired keys still published. */
  signing: JWK[];
  /** Public halves of `signing`, for verifying our own tokens locally. */
  publicJwks: { keys: JWK[] };
  /** Cookie signing keys, newest first (the first signs, all verify). */
  cookieKeys: string[];
};

type NewKey = Omit<KeyRow, 'created_at' | 'rotated_at'>;

const jwsAlgorithm: Record<SigningKeyAlgorithm, string> = { EC: 'ES256', RSA: 'RS256' };

/** ID tokens live an hour; a retired key stays published until every token it signed has expired. */
const idTokenTtl = 3600;

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

const sealed = (db: Queryable, key: NewKey): NewKey => ({
  ...key,
  value: sealSecret(db, sealedColumns.oidcKeys, key.id, key.value),
});

async function retention(db: Queryable): Promise<number> {
  const row = await db('resources').max({ ttl: 'access_token_ttl' }).first();
  return Math.max(idTokenTtl, Number(row?.ttl ?? 0)) * 1000;
}

type Wanted = { kind: KeyKind; algorithm: SigningKeyAlgorithm | null };
const wanted: Wanted[] = [
  { kind: 'private-keys', algorithm: 'EC' },
  { kind: 'private-keys', algorithm: 'RSA' },
  { kind: 'cookie-keys', algorithm: null },
];

async function missingKeys(db: Queryable): Promise<Wanted[]> {
  const present = await db('oidc_keys').whereNull('rotated_at').select<KeyRow[]>('kind', 'algorithm');
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
      await trx('oidc_keys').insert(
        rows.map((row) => ({ ...sealed(trx, row), created_at: Date.now(), rotated_at: null })),
      );
      await bumpCacheVersion(trx, 'keys');
    }
  });
}

async function loadKeySet(db: Queryable): Promise<KeySet> {
  const window = await retention(db);
  const now = Date.now();
  const rows = await db('oidc_keys')
    .where((query) => {
      query.whereNull('rotated_at').orWhere('rotated_at', '>', now - window);
    })
    .orderByRaw('case when rotated_at is null then 0 else 1 end')
    .orderBy('created_at', 'desc')
    .select<KeyRow[]>('*');
  // Opened once per load into the cache: signing never decrypts.
  const valueOf = (row: KeyRow) => openSecret(db, sealedColumns.oidcKeys, row.id, row.value);
  const signing = rows.filter((row) => row.kind === 'private-keys').map((row) => JSON.parse(valueOf(row)) as JWK);
  return {
    signing,
    publicJwks: {
      keys: signing.map(({ kty, crv, x, y, n, e, kid, alg, use }) => ({ kty, crv, x, y, n, e, kid, alg, use })),
    },
    cookieKeys: rows.filter((row) => row.kind === 'cookie-keys').map(valueOf),
  };
}

export const currentKeySet = (db: Queryable, cache: SharedCache) => cache.get('keys', 'all', () => loadKeySet(db));

export type KeySummary = { id: string; createdAt: number; signingKeyAlgorithm?: SigningKeyAlgorithm; retired: boolean };

const summary = (row: KeyRow): KeySummary => ({
  id: row.id,
  createdAt: row.created_at,
  ...(row.algorithm && { signingKeyAlgorithm: row.algorithm }),
  retired: row.rotated_at !== null,
});

/** The keys of a kind that are still in use or published, newest first. */
export async function listKeys(db: Queryable, kind: KeyKind): Promise<KeySummary[]> {
  const window = await retention(db);
  const rows = await db('oidc_keys')
    .where({ kind })
    .where((query) => {
      query.whereNull('rotated_at').orWhere('rotated_at', '>', Date.now() - window);
    })
    .orderBy('created_at', 'desc')
    .select<KeyRow[]>('*');
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
    const replaced = trx('oidc_keys').where({ kind }).whereNull('rotated_at');
    await (kind === 'private-keys' ? replaced.where({ algorithm }) : replaced).update({ rotated_at: now });
    const key = kind === 'private-keys' ? await newSigningKey(algorithm) : newCookieKey();
    await trx('oidc_keys').insert({ ...sealed(trx, key), created_at: now, rotated_at: null });
    await pruneRetiredKeys(trx);
    await bumpCacheVersion(trx, 'keys');
  });
}

export async function pruneRetiredKeys(db: Queryable): Promise<number> {
  const window = await retention(db);
  return db('oidc_keys')
    .whereNotNull('rotated_at')
    .where('rotated_at', '<=', Date.now() - window)
    .delete();
}

/** Removes a retired key now (e.g. one that leaked). The key in use cannot be removed: rotate first. */
export async function deleteKey(db: Queryable, kind: KeyKind, id: string): Promise<'deleted' | 'not-found' | 'in-use'> {
  return withTransaction(db, async (trx) => {
    await lockCache(trx, 'keys');
    const row = await trx('oidc_keys').where({ kind, id }).first<KeyRow | undefined>();
    if (!row) {
      return 'not-found';
    }
    if (row.rotated_at === null) {
      return 'in-use';
    }
    await trx('oidc_keys').where({ kind, id }).delete();
    await bumpCacheVersion(trx, 'keys');
    return 'deleted';
  });
}
