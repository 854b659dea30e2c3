import type { Knex } from 'knex';

import { RequestError } from '../http/errors.ts';
import { assertJsonFits, identitiesBytes } from '../http/limits.ts';
import { isUniqueViolation, type Queryable } from '../storage/database.ts';
import { generateId } from '../storage/ids.ts';
import {
  deleteSocialIdentityIndex,
  findUserRowBySocialIdentity,
  identitiesOf,
  insertSocialIdentityIndex,
  updateIdentities,
} from './queries.ts';
import type { User } from './schemas.ts';
import {
  deleteSsoIdentity,
  insertSsoIdentity,
  type SsoIdentityLink,
  updateSsoIdentityDetail,
} from './sso-identity-queries.ts';
import { getUserRowForUpdate } from './users.ts';

export type SocialIdentity = User['identities'][string];

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
  const holder = await findUserRowBySocialIdentity(trx, target, identity.userId);
  if (holder && holder.id !== userId) {
    throw new RequestError('user.identity_already_in_use');
  }
  await deleteSocialIdentityIndex(trx, userId, target);
  try {
    await insertSocialIdentityIndex(trx, userId, target, identity.userId);
  } catch (error) {
    if (isUniqueViolation(error)) {
      throw new RequestError('user.identity_already_in_use');
    }
    throw error;
  }
  const identities = { ...identitiesOf(user.identities), [target]: identity };
  assertJsonFits(identities, identitiesBytes, 'identities');
  await updateIdentities(trx, userId, identities);
}

export async function unlinkSocialIdentity(trx: Knex.Transaction, userId: string, target: string): Promise<void> {
  const user = await getUserRowForUpdate(trx, userId);
  const identities = identitiesOf(user.identities);
  if (!Object.hasOwn(identities, target)) {
    throw new RequestError('entity.not_exists_with_id', { entity: 'identity', id: target });
  }
  await deleteSocialIdentityIndex(trx, userId, target);
  await updateIdentities(trx, userId, Object.fromEntries(Object.entries(identities).filter(([key]) => key !== target)));
}

/** Links the IdP's subject to the user, or refreshes what the IdP said about them at this sign-in. */
export async function linkSsoIdentity(trx: Queryable, userId: string, identity: SsoIdentityLink): Promise<void> {
  if (await updateSsoIdentityDetail(trx, userId, identity)) {
    return;
  }
  try {
    await insertSsoIdentity(trx, generateId(), userId, identity);
  } catch (error) {
    if (isUniqueViolation(error)) {
      throw new RequestError('user.identity_already_in_use');
    }
    throw error;
  }
}

export async function unlinkSsoIdentity(db: Queryable, userId: string, ssoConnectorId: string): Promise<void> {
  if (!(await deleteSsoIdentity(db, userId, ssoConnectorId))) {
    throw new RequestError('entity.not_exists_with_id', { entity: 'SSO identity', id: ssoConnectorId });
  }
}
