import { createHash, randomBytes } from 'node:crypto';

import { administratorEverExisted } from '../administrators/first-administrator.ts';
import { deleteSetupToken, insertSetupToken } from '../administrators/setup-token-queries.ts';
import type { Config } from '../config/env.ts';
import { type NoticeStream, writeOneTimeSecret } from '../http/logger.ts';
import { roleHasUsers } from '../roles/queries.ts';
import { consoleApp } from '../shared/console-ids.ts';
import type { Queryable } from '../storage/database.ts';
import { consoleUrl } from './console-app.ts';

/**
 * The console's first run, the unauthenticated creation of the first administrator. Open while no
 * administrator exists; in production only until one ever existed (`console_first_run`, kept in
 * the database so every instance and every restart agrees). From afar it takes a setup token that
 * the service prints at start; tokens are stored hashed, spent by use, and all void once an
 * administrator exists.
 */

/** How the first run looks from one request: open to it, open with a setup token, or not at all. */
export type FirstRun = 'local' | 'setup-token' | 'closed';

export async function hasAdministrator(db: Queryable): Promise<boolean> {
  return roleHasUsers(db, consoleApp.roleId);
}

export async function firstRunOpen(db: Queryable, production: boolean): Promise<boolean> {
  return !(await hasAdministrator(db)) && !(production && (await administratorEverExisted(db)));
}

const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');

/**
 * At start, while the first run is open: a new setup token (32 random bytes, only its hash kept),
 * shown once to the operator. Every instance that starts prints its own; each works once.
 */
export async function offerSetupToken(
  db: Queryable,
  config: Pick<Config, 'production' | 'endpoint'>,
  notices: NoticeStream,
): Promise<void> {
  if (!(await firstRunOpen(db, config.production))) {
    return;
  }
  const token = randomBytes(32).toString('base64url');
  await insertSetupToken(db, hashToken(token));
  writeOneTimeSecret(
    notices,
    config.production,
    `Console setup token (shown once; it lets a browser on another machine create the first administrator at ${consoleUrl(config.endpoint)})`,
    {
      setupToken: token,
    },
  );
}

/** Spends a setup token: true once per token (inside the caller's transaction, so a rollback keeps it). */
export async function spendSetupToken(db: Queryable, token: string): Promise<boolean> {
  return deleteSetupToken(db, hashToken(token));
}
