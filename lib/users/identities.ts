import type { Knex } from 'knex';

import { tenantId } from '../shared/tenant.ts';
import { RequestError } from '../http/errors.ts';
import { assertJsonFits, identitiesBytes } from '../http/limits.ts';
import { isUniqueViolation, type Queryable } from '../storage/database.ts';
import { generateId } from '../storage/ids.ts';
import type { UserRow } from './queries.ts';
import type { User } from './schemas.ts';
import { getUserRowForUpdate } from './users.ts';

export type SocialIdentity = User['identities'][string];

/** The user holding an identity at a social connector's target. */
export async function findUserBySocialIdentity(
  db: Queryable,
  target: string,
  identityId: string,
): Promise<UserRow | undefined> {
  return db('users')
    .whereIn('id', db('user_social_identities').where({ target, identity_id: identityId }).select('user_id'))
    .first<UserRow | undefined>();
}

/**
 * Links (or replaces) the user's identity at `target`. The unique index refuses an identity held by
 * someone else, even when two links race.
 */
export async function linkSocialIdentity(
  trx: Knex.Transaction,
  userId: string,
  target: string,
  identity: SocialIdentity,
): Promise<void> {
  const user = await getUserRowForUpdate(trx, userId);
  const holder = await findUserBySocialIdentity(trx, target, identity.userId);
  if (holder && holder.id !== userId) {
    throw new RequestError('user.identity_already_in_use');
  }
  await trx('user_social_identities').where({ user_id: userId, target }).delete();
  try {
    await trx('user_social_identities').insert({ user_id: userId, target, identity_id: identity.userId });
  } catch (error) {
    if (isUniqueViolation(error)) {
      throw new RequestError('user.identity_already_in_use');
    }
    throw error;
  }
  const identities = { ...(JSON.parse(user.identities) as User['identities']), [target]: identity };
  assertJsonFits(identities, identitiesBytes, 'identities');
  await trx('users')
    .where({ id: userId })
    .update({ identities: JSON.stringify(identities), updated_at: Date.now() });
}

export async function unlinkSocialIdentity(trx: Knex.Transaction, userId: string, target: string): Promise<void> {
  const user = await getUserRowForUpdate(trx, userId);
  const { [target]: removed, ...identities } = JSON.parse(user.identities) as Record<
    string,
    SocialIdentity | undefined
  >;
  if (!removed) {
    throw new RequestError('entity.not_exists_with_id', { entity: 'identity', id: target });
  }
  await trx('user_social_identities').where({ user_id: userId, target }).delete();
  await trx('users')
    .where({ id: userId })
    .update({ identities: JSON.stringify(identities), updated_at: Date.now() });
}

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

const toSsoIdentity = (row: SsoIdentityRow): SsoIdentity => ({
  tenantId,
  id: row.id,
  userId: row.user_id,
  issuer: row.issuer,
  identityId: row.identity_id,
  detail: JSON.parse(row.detail) as Record<string, unknown>,
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
export async function findUserBySsoIdentity(
  db: Queryable,
  issuer: string,
  identityId: string,
): Promise<UserRow | undefined> {
  return db('users')
    .whereIn('id', db('user_sso_identities').where({ issuer, identity_id: identityId }).select('user_id'))
    .first<UserRow | undefined>();
}

/** Links the IdP's subject to the user, or refreshes what the IdP said about them at this sign-in. */
export async function linkSsoIdentity(
  trx: Queryable,
  userId: string,
  identity: { ssoConnectorId: string; issuer: string; identityId: string; detail: Record<string, unknown> },
): Promise<void> {
  const now = Date.now();
  const updated = await trx('user_sso_identities')
    .where({ user_id: userId, issuer: identity.issuer, identity_id: identity.identityId })
    .update({ detail: JSON.stringify(identity.detail), updated_at: now });
  if (updated > 0) {
    return;
  }
  try {
    await trx('user_sso_identities').insert({
      id: generateId(),
      user_id: userId,
      sso_connector_id: identity.ssoConnectorId,
      issuer: identity.issuer,
      identity_id: identity.identityId,
      detail: JSON.stringify(identity.detail),
      created_at: now,
      updated_at: now,
    });
  } catch (error) {
    if (isUniqueViolation(error)) {
      throw new RequestError('user.identity_already_in_use');
    }
    throw error;
  }
}

export async function unlinkSsoIdentity(db: Queryable, userId: string, ssoConnectorId: string): Promise<void> {
  const deleted = await db('user_sso_identities').where({ user_id: userId, sso_connector_id: ssoConnectorId }).delete();
  if (deleted === 0) {
    throw new RequestError('entity.not_exists_with_id', { entity: 'SSO identity', id: ssoConnectorId });
  }
}
