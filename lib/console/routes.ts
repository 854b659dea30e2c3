import type { Knex } from 'knex';
import { z } from 'zod';

import type { Config } from '../config/env.ts';
import type { Api } from '../http/route.ts';
import type { SharedCache } from '../storage/shared-cache.ts';
import { userSchema, username } from '../users/schemas.ts';
import { createAdministrator, hasAdministrator } from './administrators.ts';
import { consoleApp, consoleRedirectUri } from './console-app.ts';

const tag = 'Console';

/**
 * The console's two public endpoints (no token: they are what a browser needs before anyone can
 * sign in): how to sign in, and, on a first run only, the creation of the first administrator.
 */
export function consoleRoutes(api: Api, db: Knex, cache: SharedCache, config: Config): void {
  api.add(
    {
      method: 'get',
      path: '/console/config',
      summary: "The admin console's sign-in settings, and whether an administrator exists yet",
      tag,
      response: z.object({
        clientId: z.string(),
        issuer: z.string(),
        redirectUri: z.string(),
        postLogoutRedirectUri: z.string(),
        managementApiResource: z.string(),
        hasAdministrator: z.boolean(),
      }),
    },
    async () => ({
      clientId: consoleApp.applicationId,
      issuer: config.issuer,
      redirectUri: consoleRedirectUri(config.endpoint),
      postLogoutRedirectUri: `${config.endpoint}/console`,
      managementApiResource: config.managementApiResource,
      hasAdministrator: await hasAdministrator(db),
    }),
  );

  api.add(
    {
      method: 'post',
      path: '/console/first-administrator',
      summary: 'Create the first administrator (a user holding the console administrator role); 409 once one exists',
      tag,
      body: z.strictObject({ username, password: z.string().min(1).max(256) }),
      response: userSchema,
      status: 201,
      errors: [409, 422],
    },
    async ({ body }, _ctx, trx) => createAdministrator(trx, cache, body, { onlyFirst: true }),
  );
}
