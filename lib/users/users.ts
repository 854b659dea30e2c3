import type { Knex } from 'knex';

import { RequestError } from '../http/errors.ts';
import { assertJsonFits, customDataBytes } from '../http/limits.ts';
import { addRolesToUser } from '../roles/assignments.ts';
import { defaultUserRoleIds } from '../roles/queries.ts';
import { revokeAccount } from '../sessions/revoke.ts';
import { assertPasswordAccepted, type PasswordRules, type UserInfo } from '../sign-in-experience/password-policy.ts';
import { readSignInExperience } from '../sign-in-experience/sign-in-experience.ts';
import type { Queryable } from '../storage/database.ts';
import { generateId } from '../storage/ids.ts';
import type { PasswordAlgorithm } from './password-digests.ts';
import { hashPassword, needsRehash, verifyPassword } from './passwords.ts';
import {
  findUserByIdentifier,
  findUserRow,
  findUserRowForUpdate,
  identitiesOf,
  insertUser,
  replacePasswordDigest,
  toUser,
  updateUser,
  type UserChanges,
  type UserRow,
} from './queries.ts';
import type { User, UserProfile } from './schemas.ts';
import { listSsoIdentities } from './sso-identity-queries.ts';

export async function getUserRow(db: Queryable, id: string): Promise<UserRow> {
  const row = await findUserRow(db, id);
  if (!row) {
    throw new RequestError('entity.not_exists_with_id', { entity: 'user', id });
  }
  return row;
}

/**
 * The user's row, locked until the transaction ends: a change that builds on what the row holds
 * (a merge, a transition) reads it so, and concurrent changes of one user run one after the other.
 */
export async function getUserRowForUpdate(trx: Knex.Transaction, id: string): Promise<UserRow> {
  const row = await findUserRowForUpdate(trx, id);
  if (!row) {
    throw new RequestError('entity.not_exists_with_id', { entity: 'user', id });
  }
  return row;
}

type Identifiers = { username?: string | null; primaryEmail?: string | null; primaryPhone?: string | null };

/**
 * Usernames, emails (whatever their case) and phones belong to one user each: 422 as Logto. A
 * username is taken whatever its case while the username policy says usernames do not differ by it.
 */
export async function assertIdentifiersFree(
  db: Queryable,
  identifiers: Identifiers,
  exceptUserId?: string,
): Promise<void> {
  const checks = [
    ['username', identifiers.username, 'user.username_already_in_use'],
    ['email', identifiers.primaryEmail, 'user.email_already_in_use'],
    ['phone', identifiers.primaryPhone, 'user.phone_already_in_use'],
  ] as const;
  const usernames = identifiers.username ? (await readSignInExperience(db)).usernamePolicy : undefined;
  for (const [type, value, code] of checks) {
    if (value) {
      const holder = await findUserByIdentifier(db, type, value, usernames);
      if (holder && holder.id !== exceptUserId) {
        throw new RequestError(code);
      }
    }
  }
}

export type NewUser = Identifiers & {
  name?: string | null;
  avatar?: string | null;
  customData?: Record<string, unknown>;
  profile?: UserProfile;
};

/**
 * A new user's password: a plain one, checked here against the rules, or a digest: ours, checked
 * when it was made (the sign-up flow hashes as soon as it receives a password), or one imported with
 * its algorithm (password-digests.ts), which no policy can see into.
 */
export type NewPassword = { plain: string; rules: PasswordRules } | { digest: string; algorithm?: PasswordAlgorithm };

/** Creates a user holding the default roles. The caller's transaction also carries its events. */
export async function createUser(trx: Queryable, input: NewUser, password?: NewPassword): Promise<User> {
  await assertIdentifiersFree(trx, input);
  if (password && 'plain' in password) {
    await assertPasswordAccepted(password.plain, password.rules, input);
  }
  const id = generateId();
  await insertUser(trx, id, {
    username: input.username ?? null,
    primaryEmail: input.primaryEmail ?? null,
    primaryPhone: input.primaryPhone ?? null,
    passwordDigest: password ? ('plain' in password ? await hashPassword(password.plain) : password.digest) : null,
    passwordAlgorithm: password && 'algorithm' in password ? password.algorithm : undefined,
    name: input.name ?? null,
    avatar: input.avatar ?? null,
    customData: input.customData ?? {},
    profile: input.profile ?? {},
  });
  await addRolesToUser(trx, id, await defaultUserRoleIds(trx));
  return toUser(await getUserRow(trx, id));
}

/** Applies changes to a user and returns it as the API shows it. */
export async function changeUser(trx: Knex.Transaction, id: string, changes: UserChanges): Promise<User> {
  const current = await getUserRowForUpdate(trx, id);
  if (changes.customData) {
    // Merged custom data (PATCH /users/:id/custom-data) grows with each request.
    assertJsonFits(changes.customData, customDataBytes, 'customData');
  }
  await assertIdentifiersFree(trx, changes, id);
  await updateUser(trx, id, changes);
  if (changes.isSuspended === true && !current.is_suspended) {
    // A suspended user keeps no session, grant or refresh token.
    await revokeAccount(trx, id);
  }
  return toUser(await getUserRow(trx, id));
}

/**
 * A person changing their own account keeps a way to be found at sign-in (Logto's rule): a
 * username, an email, a phone, a social or an enterprise identity; 400 before the last one goes.
 */
export async function assertSignInMethodLeft(
  db: Queryable,
  row: UserRow,
  removing: 'username' | 'primaryEmail' | 'primaryPhone',
): Promise<void> {
  const left = {
    username: row.username,
    primaryEmail: row.primary_email,
    primaryPhone: row.primary_phone,
    [removing]: null,
  };
  const hasIdentifier =
    Object.values(left).some(Boolean) ||
    Object.keys(identitiesOf(row.identities)).length > 0 ||
    (await listSsoIdentities(db, row.id)).length > 0;
  if (!hasIdentifier) {
    throw new RequestError('user.last_sign_in_method_required');
  }
}

export const userInfoOf = (row: UserRow): UserInfo => ({
  username: row.username,
  primaryEmail: row.primary_email,
  primaryPhone: row.primary_phone,
  name: row.name,
});

/**
 * Checks a user's password; once it matches a digest of another algorithm (an imported user's first
 * sign-in), the digest is replaced by ours, unless the password changed meanwhile.
 */
export async function verifyUserPassword(db: Queryable, row: UserRow, password: string): Promise<boolean> {
  if (!(await verifyPassword(row, password))) {
    return false;
  }
  if (needsRehash(row) && row.password_digest) {
    await replacePasswordDigest(db, row.id, row.password_digest, await hashPassword(password));
  }
  return true;
}

export async function setPassword(
  trx: Knex.Transaction,
  id: string,
  password: string,
  rules: PasswordRules,
): Promise<User> {
  const current = await getUserRowForUpdate(trx, id);
  await assertPasswordAccepted(password, rules, userInfoOf(current));
  return changeUser(trx, id, { passwordDigest: await hashPassword(password) });
}
