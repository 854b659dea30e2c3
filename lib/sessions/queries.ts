import type { AdapterPayload } from 'oidc-provider';
import { z } from 'zod';

import type { Queryable } from '../storage/database.ts';
import { jsonColumn } from '../storage/json-column.ts';

/*
 * oidc-provider's model table (sessions, grants, interactions, codes, refresh and opaque tokens),
 * below both the provider's adapter (oidc/adapter.ts) and users/, which ends a user's sessions.
 */

/** What a lookup reads of a row. */
export type ModelRow = { payload: AdapterPayload; expires_at: number | null; consumed_at: number | null };

/** The provider's own document: its shape is the provider's, checked by it; here it must be an object. */
const payloadOf = jsonColumn('oidc_model_instances', 'payload', z.looseObject({}));

export type ModelKey = { model: string; id: string };

export async function upsertModel(
  db: Queryable,
  { model, id }: ModelKey,
  payload: AdapterPayload,
  expiresAt: number | null,
): Promise<void> {
  await db('oidc_model_instances')
    .insert({
      model_name: model,
      id,
      payload: JSON.stringify(payload),
      expires_at: expiresAt,
      grant_id: payload.grantId ?? null,
      uid: payload.uid ?? null,
      user_code: payload.userCode ?? null,
      account_id: payload.accountId ?? null,
    })
    .onConflict(['model_name', 'id'])
    .merge();
}

/** The model's instance found by its id, uid or user code. */
export async function findModel(
  db: Queryable,
  model: string,
  where: { id: string } | { uid: string } | { user_code: string },
): Promise<ModelRow | undefined> {
  const row = await db('oidc_model_instances')
    .where({ model_name: model })
    .where(where)
    .first<{ payload: string; expires_at: number | null; consumed_at: number | null } | undefined>(
      'payload',
      'expires_at',
      'consumed_at',
    );
  return row && { ...row, payload: payloadOf(row.payload) };
}

export async function consumeModel(db: Queryable, { model, id }: ModelKey): Promise<void> {
  await db('oidc_model_instances').where({ model_name: model, id }).update({ consumed_at: Date.now() });
}

export async function deleteModel(db: Queryable, { model, id }: ModelKey): Promise<void> {
  await db('oidc_model_instances').where({ model_name: model, id }).delete();
}

export async function deleteModelsOfGrant(db: Queryable, grantId: string): Promise<void> {
  await db('oidc_model_instances').where({ grant_id: grantId }).delete();
}

/** The account's grants (to applications) that have not expired, newest first. */
export async function listGrantsOfAccount(
  db: Queryable,
  accountId: string,
): Promise<Array<{ id: string; payload: AdapterPayload; expiresAt: number }>> {
  const rows = await db('oidc_model_instances')
    .where({ model_name: 'Grant', account_id: accountId })
    .where('expires_at', '>', Date.now())
    .orderBy('id')
    .select<Array<{ id: string; payload: string; expires_at: number | string }>>('id', 'payload', 'expires_at');
  return rows
    .map((row) => ({ id: row.id, payload: payloadOf(row.payload), expiresAt: Number(row.expires_at) }))
    .sort((a, b) => Number(b.payload.iat ?? 0) - Number(a.payload.iat ?? 0));
}

/** The account's unexpired sessions (the provider's `Session` documents), newest login first. */
export async function listSessionsOfAccount(
  db: Queryable,
  accountId: string,
): Promise<Array<{ payload: AdapterPayload; expiresAt: number }>> {
  const rows = await db('oidc_model_instances')
    .where({ model_name: 'Session', account_id: accountId })
    .where('expires_at', '>', Date.now())
    .select<Array<{ payload: string; expires_at: number | string }>>('payload', 'expires_at');
  return rows
    .map((row) => ({ payload: payloadOf(row.payload), expiresAt: Number(row.expires_at) }))
    .sort((a, b) => Number(b.payload.loginTs ?? 0) - Number(a.payload.loginTs ?? 0));
}

/** Ends the account's session named by its uid (never by its id, the cookie's value); false if it holds none. */
export async function deleteSessionOfAccount(db: Queryable, accountId: string, uid: string): Promise<boolean> {
  return (await db('oidc_model_instances').where({ model_name: 'Session', account_id: accountId, uid }).delete()) > 0;
}

export async function deleteModelsOfAccount(db: Queryable, accountId: string): Promise<void> {
  await db('oidc_model_instances').where({ account_id: accountId }).delete();
}

/** Deletes rows past their expiry; lookups already ignore them, this keeps the table small. */
export async function purgeExpiredModels(db: Queryable): Promise<number> {
  return db('oidc_model_instances').where('expires_at', '<=', Date.now()).delete();
}
