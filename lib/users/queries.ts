import type { Knex } from 'knex';

import type { Queryable } from '../storage/database.ts';
import { anyJsonObject, jsonColumn } from '../storage/json-column.ts';
import { listPage, type Page } from '../storage/list.ts';
import { type Search, whereSearch } from '../storage/search.ts';
import { bumpCacheVersion, type SharedCache } from '../storage/shared-cache.ts';
import { ownAlgorithm } from './password-digests.ts';
import { phoneForms, phoneMatches } from './phone-numbers.ts';
import { type User, type UserProfile, userProfileSchema, userSchema } from './schemas.ts';

export type UserRow = {
  id: string;
  username: string | null;
  primary_email: string | null;
  primary_phone: string | null;
  password_digest: string | null;
  password_algorithm: string | null;
  name: string | null;
  avatar: string | null;
  custom_data: string;
  profile: string;
  identities: string;
  application_id: string | null;
  last_sign_in_at: number | null;
  is_suspended: number | boolean;
  mfa_skipped: number | boolean;
  mfa_skipped_on_sign_in: number | boolean;
  passkey_sign_in_skipped: number | boolean;
  /** When the password was last set (null: before password expiration existed). */
  password_updated_at: number | null;
  created_at: number;
  updated_at: number;
};

const customDataOf = jsonColumn('users', 'custom_data', anyJsonObject);
/** Social identities by connector target, as `linkSocialIdentity` and the identity routes write them. */
export const identitiesOf = jsonColumn('users', 'identities', userSchema.shape.identities);
const profileOf = jsonColumn('users', 'profile', userProfileSchema);

/** A row's OpenID profile (`users.profile`: given name, locale, address, …). */
export const profileOfRow = (row: UserRow): UserProfile => profileOf(row.profile);
export const customDataOfRow = (row: UserRow): Record<string, unknown> => customDataOf(row.custom_data);

/** The user as the management API shows it: never the password digest. */
export function toUser(row: UserRow): User {
  return {
    id: row.id,
    username: row.username,
    primaryEmail: row.primary_email,
    primaryPhone: row.primary_phone,
    name: row.name,
    avatar: row.avatar,
    customData: customDataOfRow(row),
    identities: identitiesOf(row.identities),
    lastSignInAt: row.last_sign_in_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    profile: profileOf(row.profile),
    applicationId: row.application_id,
    isSuspended: Boolean(row.is_suspended),
    hasPassword: row.password_digest !== null,
  };
}

/** What a write may set; the email's lower-cased key follows the email. */
export type UserChanges = Partial<{
  username: string | null;
  primaryEmail: string | null;
  primaryPhone: string | null;
  passwordDigest: string | null;
  /** The algorithm of `passwordDigest` when it is not ours (an imported digest). */
  passwordAlgorithm: string;
  name: string | null;
  avatar: string | null;
  customData: Record<string, unknown>;
  profile: UserProfile;
  isSuspended: boolean;
  lastSignInAt: number;
  mfaSkipped: boolean;
  mfaSkippedOnSignIn: boolean;
  passkeySignInSkipped: boolean;
  /** Set with a new password; an administrator's expiry sets it to 0. */
  passwordUpdatedAt: number;
}>;

function toColumns(changes: UserChanges): Record<string, unknown> {
  const columns: Record<string, unknown> = {};
  const set = (column: string, value: unknown) => {
    if (value !== undefined) {
      columns[column] = value;
    }
  };
  set('username', changes.username);
  set('username_key', changes.username === undefined ? undefined : (changes.username?.toLowerCase() ?? null));
  set('primary_email', changes.primaryEmail);
  set('email_key', changes.primaryEmail === undefined ? undefined : (changes.primaryEmail?.toLowerCase() ?? null));
  set('primary_phone', changes.primaryPhone && phoneForms(changes.primaryPhone).stored);
  set('password_digest', changes.passwordDigest);
  set('password_updated_at', changes.passwordUpdatedAt ?? (changes.passwordDigest ? Date.now() : undefined));
  set(
    'password_algorithm',
    changes.passwordDigest === undefined
      ? undefined
      : changes.passwordDigest && (changes.passwordAlgorithm ?? ownAlgorithm),
  );
  set('name', changes.name);
  set('avatar', changes.avatar);
  set('custom_data', changes.customData && JSON.stringify(changes.customData));
  set('profile', changes.profile && JSON.stringify(changes.profile));
  set('is_suspended', changes.isSuspended);
  set('last_sign_in_at', changes.lastSignInAt);
  set('mfa_skipped', changes.mfaSkipped);
  set('mfa_skipped_on_sign_in', changes.mfaSkippedOnSignIn);
  set('passkey_sign_in_skipped', changes.passkeySignInSkipped);
  return columns;
}

export async function insertUser(db: Queryable, id: string, changes: UserChanges): Promise<void> {
  await bumpCacheVersion(db, 'users');
  const now = Date.now();
  await db('users').insert({
    id,
    custom_data: '{}',
    profile: '{}',
    identities: '{}',
    is_suspended: false,
    created_at: now,
    updated_at: now,
    ...toColumns(changes),
  });
}

export async function updateUser(db: Queryable, id: string, changes: UserChanges): Promise<void> {
  if (changes.isSuspended !== undefined) {
    await bumpCacheVersion(db, 'users');
  }
  await db('users')
    .where({ id })
    .update({ ...toColumns(changes), updated_at: Date.now() });
}

/** Our digest in place of an imported one, if the row still holds that one. */
export async function replacePasswordDigest(
  db: Queryable,
  id: string,
  previous: string,
  digest: string,
): Promise<void> {
  await db('users')
    .where({ id, password_digest: previous })
    .update({ password_digest: digest, password_algorithm: ownAlgorithm, updated_at: Date.now() });
}

export async function findUserRow(db: Queryable, id: string): Promise<UserRow | undefined> {
  return db('users').where({ id }).first<UserRow | undefined>();
}

/** The row, locked until the transaction ends: read so before changing what it holds. */
export async function findUserRowForUpdate(trx: Knex.Transaction, id: string): Promise<UserRow | undefined> {
  return trx('users').where({ id }).forUpdate().first<UserRow | undefined>();
}

export async function findUser(db: Queryable, id: string): Promise<User | undefined> {
  const row = await findUserRow(db, id);
  return row && toUser(row);
}

export async function findUsersByIds(db: Queryable, ids: string[]): Promise<User[]> {
  const rows = await db('users').whereIn('id', ids).select<UserRow[]>('*');
  return rows.map(toUser);
}

export type UserStanding = 'active' | 'suspended' | 'deleted';

/** Whether a user may still act, from memory: the token endpoint asks on every exchange. */
export const userStanding = (db: Queryable, cache: SharedCache, id: string): Promise<UserStanding> =>
  cache.get('users', id, async () => {
    const row = await db('users').where({ id }).first<{ is_suspended: number | boolean } | undefined>('is_suspended');
    return row ? (row.is_suspended ? 'suspended' : 'active') : 'deleted';
  });

/** How usernames compare: the username policy's `caseSensitive` (sign-in-experience/username-policy.ts). */
export type UsernameCase = { caseSensitive: boolean };

/**
 * The user a sign-in identifier names: an email whatever its case; a phone in either of its forms
 * (phone-numbers.ts), the one written exactly first where accounts from before the normalisation
 * hold both; a username byte for byte, or whatever its case under a case-insensitive username
 * policy (the same spelling first).
 */
export async function findUserByIdentifier(
  db: Queryable,
  type: 'username' | 'email' | 'phone',
  value: string,
  usernames: UsernameCase = { caseSensitive: true },
): Promise<UserRow | undefined> {
  if (type === 'phone') {
    const rows = await db('users').whereIn('primary_phone', phoneMatches(value)).select<UserRow[]>('*');
    const digits = value.replace(/^\+/, '');
    return rows.find((row) => row.primary_phone === digits) ?? rows[0];
  }
  if (type === 'username' && !usernames.caseSensitive) {
    const rows = await db('users').where({ username_key: value.toLowerCase() }).select<UserRow[]>('*');
    return rows.find((row) => row.username === value) ?? rows[0];
  }
  const where = type === 'username' ? { username: value } : { email_key: value.toLowerCase() };
  return db('users').where(where).first<UserRow | undefined>();
}

/** The ids of users that any of `values` names, as a username, an email or a phone number. */
export async function findUserIdsByAnyIdentifier(db: Queryable, values: string[]): Promise<string[]> {
  const rows = await db('users')
    .whereIn('username', values)
    .orWhereIn(
      'email_key',
      values.map((value) => value.toLowerCase()),
    )
    .orWhereIn(
      'primary_phone',
      values.flatMap((value) => phoneMatches(value)),
    )
    .select<Array<{ id: string }>>('id');
  return rows.map((row) => row.id);
}

export async function deleteUser(db: Queryable, id: string): Promise<boolean> {
  await bumpCacheVersion(db, 'users');
  return (await db('users').where({ id }).delete()) > 0;
}

/** What Logto's user search covers (storage/search.ts). */
export const userSearchColumns = {
  id: 'id',
  primaryEmail: 'primary_email',
  primaryPhone: 'primary_phone',
  username: 'username',
  name: 'name',
} as const;

export type UserFilter = { ids?: string[]; search?: Search; excludeRoleId?: string; excludeOrganizationId?: string };

export async function listUsers(
  db: Queryable,
  filter: UserFilter,
  page: Page,
): Promise<{ items: User[]; total: number }> {
  const query = db('users').select('*');
  if (filter.ids) {
    query.whereIn('id', filter.ids);
  }
  if (filter.search) {
    whereSearch(db, query, filter.search, userSearchColumns);
  }
  if (filter.excludeRoleId) {
    query.whereNotIn('id', db('users_roles').where({ role_id: filter.excludeRoleId }).select('user_id'));
  }
  if (filter.excludeOrganizationId) {
    query.whereNotIn(
      'id',
      db('organization_users').where({ organization_id: filter.excludeOrganizationId }).select('user_id'),
    );
  }
  const { rows, total } = await listPage<UserRow>(query, page);
  return { items: rows.map(toUser), total };
}

/** The user holding an identity at a social connector's target (`user_social_identities` indexes `users.identities`). */
export async function findUserRowBySocialIdentity(
  db: Queryable,
  target: string,
  identityId: string,
): Promise<UserRow | undefined> {
  return db('users')
    .whereIn('id', db('user_social_identities').where({ target, identity_id: identityId }).select('user_id'))
    .first<UserRow | undefined>();
}

/** Adds the index row of a social identity; the unique index refuses one another user holds. */
export async function insertSocialIdentityIndex(
  db: Queryable,
  userId: string,
  target: string,
  identityId: string,
): Promise<void> {
  await db('user_social_identities').insert({ user_id: userId, target, identity_id: identityId });
}

export async function deleteSocialIdentityIndex(db: Queryable, userId: string, target: string): Promise<void> {
  await db('user_social_identities').where({ user_id: userId, target }).delete();
}

export async function updateIdentities(db: Queryable, userId: string, identities: User['identities']): Promise<void> {
  await db('users')
    .where({ id: userId })
    .update({ identities: JSON.stringify(identities), updated_at: Date.now() });
}
