import { z } from 'zod';

import type { Api } from '../http/api/route.ts';
import type { ServiceContext } from '../http/context.ts';
import { isLocalRequest } from '../http/local-request.ts';
import { consoleApp } from '../shared/console-ids.ts';
import { pwnedPasswordLookup } from '../sign-in-experience/pwned-passwords.ts';
import { username, userSchema } from '../users/schemas.ts';
import { createAdministrator } from './administrators.ts';
import { consoleRedirectUri, consoleUrl } from './console-app.ts';
import { type FirstRun, firstRunOpen, hasAdministrator } from './first-run.ts';

const tag = 'Console';

/**
 * The console's two public endpoints (no token: they are what a browser needs before anyone can
 * sign in): how to sign in, and, on a first run only, the creation of the first administrator, from
 * this machine or with the setup token printed at start (lib/console/first-run.ts).
 */
export function consoleRoutes(api: Api, { db, cache, config, logger }: ServiceContext): void {
  const isPwned = pwnedPasswordLookup(config.pwnedPasswordsUrl, logger);
  api.add(
    {
      method: 'get',
      path: '/console/config',
      summary:
        "The admin console's sign-in settings, whether an administrator exists yet, and whether this browser may create the first one",
      tag,
      response: z.object({
        clientId: z.string(),
        issuer: z.string(),
        redirectUri: z.string(),
        postLogoutRedirectUri: z.string(),
        managementApiResource: z.string(),
        hasAdministrator: z.boolean(),
        firstRun: z.enum(['local', 'setup-token', 'closed'] satisfies FirstRun[]),
      }),
    },
    async (_input, ctx) => {
      const open = await firstRunOpen(db, config.production);
      const firstRun: FirstRun = !open ? 'closed' : isLocalRequest(ctx, config) ? 'local' : 'setup-token';
      return {
        clientId: consoleApp.applicationId,
        issuer: config.issuer,
        redirectUri: consoleRedirectUri(config.endpoint),
        postLogoutRedirectUri: consoleUrl(config.endpoint),
        managementApiResource: config.managementApiResource,
        hasAdministrator: await hasAdministrator(db),
        firstRun,
      };
    },
  );

  api.add(
    {
      method: 'post',
      path: '/console/first-administrator',
      summary:
        'Create the first administrator (a user holding the console administrator role): from this machine, or with `setupToken` (printed at start) from elsewhere; 409 once one exists; 403 when the first run is closed',
      tag,
      body: z.strictObject({
        username,
        password: z.string().min(1).max(256),
        setupToken: z.string().min(1).max(256).optional(),
      }),
      response: userSchema,
      status: 201,
      errors: [409, 422],
    },
    async ({ body: { setupToken, ...input } }, ctx, trx, effects) =>
      createAdministrator(trx, cache, input, {
        firstRun: { local: isLocalRequest(ctx, config), setupToken, production: config.production },
        effects,
        isPwned,
      }),
  );
}
