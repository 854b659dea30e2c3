import { tenantId } from '../shared/tenant.ts';
import type { Queryable } from '../storage/database.ts';
import { lookupDigest, openSecret, sealedColumns, sealSecret } from '../storage/sealed-columns.ts';
import type { PersonalAccessToken } from './schemas.ts';

type Row = {
  id: string;
  user_id: string;
  name: string;
  value_digest: string;
  value: string;
  created_at: number;
  expires_at: number | null;
};

const toToken = (db: Queryable, row: Row): PersonalAccessToken => ({
  tenantId,
  userId: row.user_id,
  name: row.name,
  value: openSecret(db, sealedColumns.personalAccessTokens, row.id, row.value),
  createdAt: row.created_at,
  expiresAt: row.expires_at,
});

export async function insertPersonalAccessToken(
  db: Queryable,
  token: { id: string; userId: string; name: string; value: string; expiresAt: number | null },
): Promise<PersonalAccessToken> {
  const row: Row = {
    id: token.id,
    user_id: token.userId,
    name: token.name,
    value_digest: lookupDigest(token.value),
    value: sealSecret(db, sealedColumns.personalAccessTokens, token.id, token.value),
    created_at: Date.now(),
    expires_at: token.expiresAt,
  };
  await db('personal_access_tokens').insert(row);
  return toToken(db, row);
}

export async function listPersonalAccessTokens(db: Queryable, userId: string): Promise<PersonalAccessToken[]> {
  const rows = await db('personal_access_tokens')
    .where({ user_id: userId })
    .orderBy([{ column: 'created_at' }, { column: 'name' }])
    .select<Row[]>('*');
  return rows.map((row) => toToken(db, row));
}

export async function findPersonalAccessToken(
  db: Queryable,
  userId: string,
  name: string,
): Promise<PersonalAccessToken | undefined> {
  const row = await db('personal_access_tokens').where({ user_id: userId, name }).first<Row | undefined>();
  return row && toToken(db, row);
}

/** The holder of a token and when it ends, by the token itself; the value is not opened. */
export async function findPersonalAccessTokenByValue(
  db: Queryable,
  value: string,
): Promise<{ userId: string; expiresAt: number | null } | undefined> {
  const row = await db('personal_access_tokens')
    .where({ value_digest: lookupDigest(value) })
    .first<Pick<Row, 'user_id' | 'expires_at'> | undefined>('user_id', 'expires_at');
  return row && { userId: row.user_id, expiresAt: row.expires_at };
}

export async function renamePersonalAccessToken(
  db: Queryable,
  userId: string,
  name: string,
  newName: string,
): Promise<boolean> {
  return (await db('personal_access_tokens').where({ user_id: userId, name }).update({ name: newName })) === 1;
}

export async function deletePersonalAccessToken(db: Queryable, userId: string, name: string): Promise<boolean> {
  return (await db('personal_access_tokens').where({ user_id: userId, name }).delete()) > 0;
}
