import { tenantId } from '../shared/tenant.ts';
import type { Queryable } from '../storage/database.ts';
import { anyJsonObject, jsonColumn } from '../storage/json-column.ts';
import type { UserRow } from './queries.ts';

/** An identity at an enterprise IdP, as Logto's `ssoIdentities` show it. */
export type SsoIdentity = {
  tenantId: string;
  id: string;
  userId: string;
  issuer: string;
  identityId: string;
  detail: Record<string, unknown>;
  createdAt: number;
  updatedAt: number;
  ssoConnectorId: string;
};

type SsoIdentityRow = {
  id: string;
  user_id: string;
  sso_connector_id: string;
  issuer: string;
  identity_id: string;
  detail: string;
  created_at: number;
  updated_at: number;
};

const detailOf = jsonColumn('user_sso_identities', 'detail', anyJsonObject);

const toSsoIdentity = (row: SsoIdentityRow): SsoIdentity => ({
  tenantId,
  id: row.id,
  userId: row.user_id,
  issuer: row.issuer,
  identityId: row.identity_id,
  detail: detailOf(row.detail),
  createdAt: row.created_at,
  updatedAt: row.updated_at,
  ssoConnectorId: row.sso_connector_id,
});

export async function listSsoIdentities(db: Queryable, userId: string): Promise<SsoIdentity[]> {
  const rows = await db('user_sso_identities')
    .where({ user_id: userId })
    .orderBy('created_at', 'asc')
    .select<SsoIdentityRow[]>('*');
  return rows.map(toSsoIdentity);
}

/** The user an enterprise IdP's subject (namespaced by its issuer) belongs to. */
export async function findUserRowBySsoIdentity(
  db: Queryable,
  issuer: string,
  identityId: string,
): Promise<UserRow | undefined> {
  return db('users')
    .whereIn('id', db('user_sso_identities').where({ issuer, identity_id: identityId }).select('user_id'))
    .first<UserRow | undefined>();
}

export type SsoIdentityLink = {
  ssoConnectorId: string;
  issuer: string;
  identityId: string;
  detail: Record<string, unknown>;
};

/** Refreshes the details of the user's identity at the issuer; false when there is none. */
export async function updateSsoIdentityDetail(
  db: Queryable,
  userId: string,
  identity: SsoIdentityLink,
): Promise<boolean> {
  const updated = await db('user_sso_identities')
    .where({ user_id: userId, issuer: identity.issuer, identity_id: identity.identityId })
    .update({ detail: JSON.stringify(identity.detail), updated_at: Date.now() });
  return updated > 0;
}

export async function insertSsoIdentity(
  db: Queryable,
  id: string,
  userId: string,
  identity: SsoIdentityLink,
): Promise<void> {
  const now = Date.now();
  await db('user_sso_identities').insert({
    id,
    user_id: userId,
    sso_connector_id: identity.ssoConnectorId,
    issuer: identity.issuer,
    identity_id: identity.identityId,
    detail: JSON.stringify(identity.detail),
    created_at: now,
    updated_at: now,
  });
}

/** False when the user had no identity at that connector. */
export async function deleteSsoIdentity(db: Queryable, userId: string, ssoConnectorId: string): Promise<boolean> {
  return (await db('user_sso_identities').where({ user_id: userId, sso_connector_id: ssoConnectorId }).delete()) > 0;
}
