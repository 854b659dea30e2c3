import type { Knex } from 'knex';
import type { Context } from 'koa';

import type { ExternalUserInfo } from '../../connectors/external-idp.ts';
import { findConnector } from '../../connectors/queries.ts';
import { RequestError } from '../../http/errors.ts';
import { provisionByEmailDomain, provisionBySsoConnector } from '../../organizations/jit/jit-provisioning.ts';
import { findSsoConnector } from '../../sso/queries.ts';
import type { Queryable } from '../../storage/database.ts';
import type { SharedCache } from '../../storage/shared-cache.ts';
import { linkSocialIdentity, linkSsoIdentity } from '../../users/identities.ts';
import { findUserByIdentifier, findUserRowBySocialIdentity, updateUser, type UserRow } from '../../users/queries.ts';
import { findUserRowBySsoIdentity } from '../../users/sso-identity-queries.ts';
import { createUser } from '../../users/users.ts';
import { recordUserDataEvent } from '../events.ts';
import type { ExperienceState, VerificationRecord } from '../state-queries.ts';

type ExternalRecord = Extract<VerificationRecord, { type: 'Social' | 'EnterpriseSso' }>;

/** What the IdP said; a record is verified only once it is stored (with the issuer, for SSO). */
function identityOf(record: ExternalRecord): { info: ExternalUserInfo; issuer: string | undefined } {
  if (!record.userInfo) {
    throw new Error(`verification record ${record.id} is verified but holds no user info`);
  }
  return { info: record.userInfo, issuer: record.issuer };
}

/** Who the identification ended with, and whether it created the account (a registration). */
export type ExternalOutcome = { userId: string; created: boolean };

function assertActive(user: UserRow): UserRow {
  if (user.is_suspended) {
    throw new RequestError('user.suspended');
  }
  return user;
}

/** An email the IdP vouches for: the only kind that may name, link or provision an account. */
const verifiedEmail = (info: ExternalUserInfo) => (info.email && info.emailVerified ? info.email : undefined);

/** With `syncProfile`, the name and avatar follow the IdP at every sign-in. */
async function syncProfile(
  trx: Queryable,
  cache: SharedCache,
  ctx: Context,
  user: UserRow,
  info: ExternalUserInfo,
): Promise<void> {
  const changes = { name: info.name ?? user.name, avatar: info.avatar ?? user.avatar };
  if (changes.name !== user.name || changes.avatar !== user.avatar) {
    await updateUser(trx, user.id, changes);
    await recordUserDataEvent(trx, cache, ctx, 'User.Data.Updated', user.id);
  }
}

/** A new account from what the IdP says (the email only when verified and not someone else's). */
async function registerFromIdp(trx: Queryable, info: ExternalUserInfo): Promise<{ userId: string; email?: string }> {
  const email = verifiedEmail(info);
  const emailFree = email !== undefined && !(await findUserByIdentifier(trx, 'email', email));
  const user = await createUser(trx, {
    primaryEmail: emailFree ? email : undefined,
    name: info.name ?? null,
    avatar: info.avatar ?? null,
  });
  return { userId: user.id, email: emailFree ? email : undefined };
}

/**
 * A social identity: its holder signs in. Otherwise, with `linkSocialIdentity`, it is linked to the
 * account that holds the same verified email; in a registration, a new account is made; in a
 * sign-in, 404 `user.identity_not_exist` tells the page to offer linking (`relatedUser`) or
 * registration.
 */
async function identifyBySocial(
  trx: Knex.Transaction,
  cache: SharedCache,
  ctx: Context,
  state: ExperienceState,
  record: ExternalRecord,
  link: boolean,
): Promise<ExternalOutcome> {
  const connector = await findConnector(trx, cache, record.connectorId);
  if (!connector) {
    throw new RequestError('entity.not_exists_with_id', { entity: 'connector', id: record.connectorId });
  }
  const { info } = identityOf(record);
  const holder = await findUserRowBySocialIdentity(trx, connector.target, info.id);
  if (holder) {
    assertActive(holder);
    if (connector.syncProfile) {
      await syncProfile(trx, cache, ctx, holder, info);
    }
    return { userId: holder.id, created: false };
  }
  const email = verifiedEmail(info);
  const related = email ? await findUserByIdentifier(trx, 'email', email) : undefined;
  const identity = { userId: info.id, details: { ...info.rawData } };
  if (link) {
    if (!related) {
      throw new RequestError('user.identity_not_exist', { reason: 'No account to link this identity to.' });
    }
    assertActive(related);
    await linkSocialIdentity(trx, related.id, connector.target, identity);
    await recordUserDataEvent(trx, cache, ctx, 'User.Data.Updated', related.id);
    return { userId: related.id, created: false };
  }
  if (state.interactionEvent !== 'Register') {
    throw new RequestError(
      'user.identity_not_exist',
      { reason: 'No account has this identity yet.' },
      {
        data: related ? { relatedUser: email } : {},
      },
    );
  }
  const created = await registerFromIdp(trx, info);
  await linkSocialIdentity(trx, created.userId, connector.target, identity);
  await recordUserDataEvent(trx, cache, ctx, 'User.Created', created.userId);
  if (created.email) {
    await provisionByEmailDomain(trx, cache, ctx, created.userId, created.email);
  }
  return { userId: created.userId, created: true };
}

/**
 * An enterprise IdP vouches for its users: the holder of the identity signs in; an account with the
 * same verified email is linked to it; otherwise one is created. Each time, the organizations that
 * admit this connector's users take the user in (just-in-time).
 */
async function identifyBySso(
  trx: Knex.Transaction,
  cache: SharedCache,
  ctx: Context,
  record: ExternalRecord,
): Promise<ExternalOutcome> {
  const connector = await findSsoConnector(trx, cache, record.connectorId);
  if (!connector) {
    throw new RequestError('entity.not_exists_with_id', { entity: 'SSO connector', id: record.connectorId });
  }
  const { info, issuer } = identityOf(record);
  if (issuer === undefined) {
    throw new Error(`SSO verification record ${record.id} is verified but holds no issuer`);
  }
  const identity = {
    ssoConnectorId: connector.id,
    issuer,
    identityId: info.id,
    detail: { ...info.rawData },
  };
  let outcome: ExternalOutcome;
  const holder = await findUserRowBySsoIdentity(trx, identity.issuer, identity.identityId);
  if (holder) {
    assertActive(holder);
    await linkSsoIdentity(trx, holder.id, identity);
    if (connector.syncProfile) {
      await syncProfile(trx, cache, ctx, holder, info);
    }
    outcome = { userId: holder.id, created: false };
  } else {
    const email = verifiedEmail(info);
    if (!email) {
      throw new RequestError('connector.authorization_failed', {
        reason: 'The identity provider did not give a verified email.',
      });
    }
    const related = await findUserByIdentifier(trx, 'email', email);
    if (related) {
      assertActive(related);
      await linkSsoIdentity(trx, related.id, identity);
      await recordUserDataEvent(trx, cache, ctx, 'User.Data.Updated', related.id);
      outcome = { userId: related.id, created: false };
    } else {
      const created = await registerFromIdp(trx, info);
      await linkSsoIdentity(trx, created.userId, identity);
      await recordUserDataEvent(trx, cache, ctx, 'User.Created', created.userId);
      await provisionByEmailDomain(trx, cache, ctx, created.userId, email);
      outcome = { userId: created.userId, created: true };
    }
  }
  await provisionBySsoConnector(trx, cache, ctx, outcome.userId, connector.id);
  return outcome;
}

/** Identification by a verified social or SSO record, in the caller's transaction (with its events). */
export async function identifyExternal(
  trx: Knex.Transaction,
  cache: SharedCache,
  ctx: Context,
  state: ExperienceState,
  record: ExternalRecord,
  link: boolean,
): Promise<ExternalOutcome> {
  if (state.interactionEvent === 'ForgotPassword') {
    throw new RequestError('session.not_supported_for_forgot_password');
  }
  return record.type === 'Social'
    ? identifyBySocial(trx, cache, ctx, state, record, link)
    : identifyBySso(trx, cache, ctx, record);
}
