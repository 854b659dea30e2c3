import { z } from 'zod';

import type { Queryable } from '../../storage/database.ts';
import { jsonColumn } from '../../storage/json-column.ts';
import { openSecret, sealedColumns, sealSecret } from '../../storage/sealed-columns.ts';

export type KeyKind = 'private-keys' | 'cookie-keys';
export type SigningKeyAlgorithm = 'EC' | 'RSA';

/** A row of `oidc_keys`, its `value` opened: a private JWK as JSON, or a cookie key. */
export type KeyRow = {
  id: string;
  kind: KeyKind;
  algorithm: SigningKeyAlgorithm | null;
  value: string;
  created_at: number;
  rotated_at: number | null;
};

export type NewKey = Omit<KeyRow, 'created_at' | 'rotated_at'>;

/** A private JWK as `newSigningKey` stores it: jose's export with its id, algorithm and use. */
export const signingJwkOf = jsonColumn(
  'oidc_keys',
  'value',
  z.looseObject({ kty: z.string(), kid: z.string(), alg: z.string(), use: z.string() }),
);

const opened = (db: Queryable, row: KeyRow): KeyRow => ({
  ...row,
  value: openSecret(db, sealedColumns.oidcKeys, row.id, row.value),
});

/** The kinds and algorithms of the keys in use. */
export async function keysInUse(db: Queryable): Promise<Array<Pick<KeyRow, 'kind' | 'algorithm'>>> {
  return db('oidc_keys').whereNull('rotated_at').select<KeyRow[]>('kind', 'algorithm');
}

/** Stores new keys in use, their values sealed. */
export async function insertKeys(db: Queryable, keys: NewKey[], createdAt: number): Promise<void> {
  await db('oidc_keys').insert(
    keys.map((key) => ({
      ...key,
      value: sealSecret(db, sealedColumns.oidcKeys, key.id, key.value),
      created_at: createdAt,
      rotated_at: null,
    })),
  );
}

/** The keys in use or retired after `retiredAfter`, opened: those in use first, each group newest first. */
export async function loadKeyRows(db: Queryable, retiredAfter: number): Promise<KeyRow[]> {
  const rows = await db('oidc_keys')
    .where((query) => {
      query.whereNull('rotated_at').orWhere('rotated_at', '>', retiredAfter);
    })
    .orderByRaw('case when rotated_at is null then 0 else 1 end')
    .orderBy('created_at', 'desc')
    .select<KeyRow[]>('*');
  return rows.map((row) => opened(db, row));
}

/** The keys of a kind in use or retired after `retiredAfter`, newest first, without their values. */
export async function listKeysOfKind(
  db: Queryable,
  kind: KeyKind,
  retiredAfter: number,
): Promise<Array<Omit<KeyRow, 'value'>>> {
  return db('oidc_keys')
    .where({ kind })
    .where((query) => {
      query.whereNull('rotated_at').orWhere('rotated_at', '>', retiredAfter);
    })
    .orderBy('created_at', 'desc')
    .select<KeyRow[]>('id', 'kind', 'algorithm', 'created_at', 'rotated_at');
}

/** Retires the kind's key in use (for signing keys, the algorithm's). */
export async function retireKeys(
  db: Queryable,
  kind: KeyKind,
  algorithm: SigningKeyAlgorithm,
  at: number,
): Promise<void> {
  const replaced = db('oidc_keys').where({ kind }).whereNull('rotated_at');
  await (kind === 'private-keys' ? replaced.where({ algorithm }) : replaced).update({ rotated_at: at });
}

export async function deleteKeysRetiredBy(db: Queryable, cutoff: number): Promise<number> {
  return db('oidc_keys').whereNotNull('rotated_at').where('rotated_at', '<=', cutoff).delete();
}

/** Whether the key is in use, retired, or not there; its value is not read. */
export async function findKeyState(
  db: Queryable,
  kind: KeyKind,
  id: string,
): Promise<'in-use' | 'retired' | undefined> {
  const row = await db('oidc_keys').where({ kind, id }).first<KeyRow | undefined>();
  return row && (row.rotated_at === null ? 'in-use' : 'retired');
}

export async function deleteKeyRow(db: Queryable, kind: KeyKind, id: string): Promise<void> {
  await db('oidc_keys').where({ kind, id }).delete();
}
