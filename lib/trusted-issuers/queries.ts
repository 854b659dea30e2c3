import { z } from 'zod';

import type { Queryable } from '../storage/database.ts';
import { jsonColumn } from '../storage/json-column.ts';
import { bumpCacheVersion, type SharedCache } from '../storage/shared-cache.ts';
import { outsideAlgorithms, type TrustedIssuer, trustedIssuerSchema } from './schemas.ts';

type TrustedIssuerRow = {
  id: string;
  name: string;
  issuer: string;
  jwks_uri: string;
  audience: string;
  algorithms: string;
  user_mapping: string;
  application_ids: string;
  created_at: number;
};

const algorithmsOf = jsonColumn('trusted_issuers', 'algorithms', z.array(z.enum(outsideAlgorithms)));
const userMappingOf = jsonColumn('trusted_issuers', 'user_mapping', trustedIssuerSchema.shape.userMapping);
const applicationIdsOf = jsonColumn('trusted_issuers', 'application_ids', z.array(z.string()));

const toTrustedIssuer = (row: TrustedIssuerRow): TrustedIssuer => ({
  id: row.id,
  name: row.name,
  issuer: row.issuer,
  jwksUri: row.jwks_uri,
  audience: row.audience,
  algorithms: algorithmsOf(row.algorithms),
  userMapping: userMappingOf(row.user_mapping),
  applicationIds: applicationIdsOf(row.application_ids),
  createdAt: row.created_at,
});

async function readTrustedIssuers(db: Queryable): Promise<TrustedIssuer[]> {
  const rows = await db('trusted_issuers').orderBy('created_at', 'asc').orderBy('id', 'asc');
  return (rows as TrustedIssuerRow[]).map(toTrustedIssuer);
}

/** Every policy, from memory: each outside token at the token endpoint looks its issuer up here. */
export const listTrustedIssuers = (db: Queryable, cache: SharedCache) =>
  cache.get('trustedIssuers', 'all', () => readTrustedIssuers(db));

export async function findTrustedIssuer(db: Queryable, id: string): Promise<TrustedIssuer | undefined> {
  const row = await db('trusted_issuers').where({ id }).first<TrustedIssuerRow | undefined>();
  return row && toTrustedIssuer(row);
}

/** The row locked until the transaction ends: read so before changing it. */
export async function findTrustedIssuerForUpdate(db: Queryable, id: string): Promise<TrustedIssuer | undefined> {
  const row = await db('trusted_issuers').where({ id }).forUpdate().first<TrustedIssuerRow | undefined>();
  return row && toTrustedIssuer(row);
}

const columnsOf = (policy: TrustedIssuer) => ({
  name: policy.name,
  issuer: policy.issuer,
  jwks_uri: policy.jwksUri,
  audience: policy.audience,
  algorithms: JSON.stringify(policy.algorithms),
  user_mapping: JSON.stringify(policy.userMapping),
  application_ids: JSON.stringify(policy.applicationIds),
});

export async function insertTrustedIssuer(db: Queryable, policy: TrustedIssuer): Promise<void> {
  await db('trusted_issuers').insert({ id: policy.id, created_at: policy.createdAt, ...columnsOf(policy) });
  await bumpCacheVersion(db, 'trustedIssuers');
}

export async function updateTrustedIssuer(db: Queryable, policy: TrustedIssuer): Promise<void> {
  await db('trusted_issuers').where({ id: policy.id }).update(columnsOf(policy));
  await bumpCacheVersion(db, 'trustedIssuers');
}

export async function deleteTrustedIssuer(db: Queryable, id: string): Promise<number> {
  const deleted = await db('trusted_issuers').where({ id }).delete();
  await bumpCacheVersion(db, 'trustedIssuers');
  return deleted;
}

/** The user made just in time for this outside subject, if any. */
export async function findJitUserId(
  db: Queryable,
  trustedIssuerId: string,
  subject: string,
): Promise<string | undefined> {
  const row = await db('trusted_issuer_subjects')
    .where({ trusted_issuer_id: trustedIssuerId, subject })
    .first<{ user_id: string } | undefined>('user_id');
  return row?.user_id;
}

export async function insertJitSubject(
  db: Queryable,
  trustedIssuerId: string,
  subject: string,
  userId: string,
): Promise<void> {
  await db('trusted_issuer_subjects').insert({ trusted_issuer_id: trustedIssuerId, subject, user_id: userId });
}
