import type { Knex } from 'knex';

import { administratorEverExisted } from '../administrators/first-administrator.ts';
import { RequestError } from '../http/errors.ts';
import { addRolesToUser } from '../roles/assignments.ts';
import { consoleApp } from '../shared/console-ids.ts';
import type { Effects } from '../shared/event-data.ts';
import type { PwnedLookup } from '../sign-in-experience/password-policy.ts';
import { currentSignInExperience } from '../sign-in-experience/sign-in-experience.ts';
import { lockCache, type SharedCache } from '../storage/shared-cache.ts';
import type { User } from '../users/schemas.ts';
import { createUser } from '../users/users.ts';
import { hasAdministrator, spendSetupToken } from './first-run.ts';

export type NewAdministrator = { username: string; password: string };

/** Who asks for the first run: a request from this machine, or one carrying a setup token. */
export type FirstRunCaller = { local: boolean; setupToken?: string; production: boolean };

/**
 * The first run's rules, checked under the roles lock (of racing requests only one gets through):
 * from afar a setup token is needed (403, so a stranger learns nothing more); an administrator that
 * exists gives 409; in production, one that ever existed closes the first run for good (403).
 */
async function assertFirstRun(trx: Knex.Transaction, caller: FirstRunCaller): Promise<void> {
  if (!caller.local) {
    if (caller.setupToken === undefined) {
      throw new RequestError('console.setup_token_required');
    }
    if (!(await spendSetupToken(trx, caller.setupToken))) {
      throw new RequestError('console.setup_token_invalid');
    }
  }
  if (await hasAdministrator(trx)) {
    throw new RequestError('console.administrator_exists');
  }
  if (caller.production && (await administratorEverExisted(trx))) {
    throw new RequestError('console.first_run_closed');
  }
}

/**
 * Creates a user holding the administrator role (password checked against the policy, as any
 * user's), in `trx`, its `User.Created` emitted through `effects` like any user's. With `firstRun`
 * (the console's unauthenticated first run) the first run's rules apply; without it (the CLI,
 * whoever holds the database) it works whenever it is run.
 */
export async function createAdministrator(
  trx: Knex.Transaction,
  cache: SharedCache,
  input: NewAdministrator,
  { firstRun, effects, isPwned }: { firstRun?: FirstRunCaller; effects: Effects; isPwned: PwnedLookup },
): Promise<User> {
  await lockCache(trx, 'roles');
  if (firstRun) {
    await assertFirstRun(trx, firstRun);
  }
  const { passwordPolicy } = await currentSignInExperience(trx, cache);
  const user = await createUser(
    trx,
    { username: input.username },
    { plain: input.password, rules: { policy: passwordPolicy, isPwned } },
  );
  await addRolesToUser(trx, user.id, [consoleApp.roleId]);
  await effects.emit('User.Created', { data: user });
  return user;
}
