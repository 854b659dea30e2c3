import { currentSignInExperience } from '../experience/sign-in-experience.ts';
import { enqueueEvent } from '../hooks/outbox.ts';
import { RequestError } from '../http/errors.ts';
import { addRolesToUser } from '../roles/assignments.ts';
import type { Queryable } from '../storage/database.ts';
import { lockCache, type SharedCache } from '../storage/shared-cache.ts';
import { withTransaction } from '../storage/transaction.ts';
import type { User } from '../users/schemas.ts';
import { createUser } from '../users/users.ts';
import { consoleApp } from './console-app.ts';

export type NewAdministrator = { username: string; password: string };

export async function hasAdministrator(db: Queryable): Promise<boolean> {
  return Boolean(await db('users_roles').where({ role_id: consoleApp.roleId }).first());
}

/**
 * Creates a user holding the administrator role (password checked against the policy, as any
 * user's). With `onlyFirst` (the console's unauthenticated first run) it is refused once an
 * administrator exists: the check and the insert run under the roles lock, so of two first-run
 * requests racing only one succeeds.
 */
export async function createAdministrator(db: Queryable, cache: SharedCache, input: NewAdministrator, { onlyFirst }: { onlyFirst: boolean }): Promise<User> {
  return withTransaction(db, async (trx) => {
    await lockCache(trx, 'roles');
    if (onlyFirst && (await hasAdministrator(trx))) {
      throw new RequestError({ code: 'console.administrator_exists', status: 409 }, 'An administrator exists already: sign in instead.');
    }
    const { passwordPolicy } = await currentSignInExperience(trx, cache);
    const user = await createUser(trx, input, passwordPolicy);
    await addRolesToUser(trx, user.id, [consoleApp.roleId]);
    await enqueueEvent(trx, cache, 'User.Created', { data: user });
    return user;
  });
}
