import type { Provider } from 'oidc-provider';

import type { Logger } from '../http/logger.ts';
import { listUserGrants, revokeUserGrant } from '../sessions/grants.ts';
import type { Queryable } from '../storage/database.ts';
import { policyOf } from './clients/application-policy.ts';

/**
 * Logto's `maxAllowedGrants`: once a person has granted an application more than that many times
 * (a grant per browser or device they signed in on), the oldest grants beyond it are revoked with
 * their tokens, after the sign-in that made the new one succeeded.
 */
export function limitGrants(provider: Provider, db: Queryable, logger: Logger): void {
  provider.on('authorization.success', (ctx) => {
    const userId = ctx.oidc.session?.accountId;
    const client = ctx.oidc.client;
    const limit = client && policyOf(client).maxAllowedGrants;
    if (!userId || !client || limit === undefined) {
      return;
    }
    void (async () => {
      const grants = (await listUserGrants(db, userId))
        .filter((grant) => grant.payload.clientId === client.clientId)
        .sort((a, b) => b.payload.iat - a.payload.iat);
      for (const grant of grants.slice(limit)) {
        await revokeUserGrant(db, userId, grant.id);
      }
    })().catch((error: unknown) => logger.error({ err: error }, 'could not revoke grants beyond maxAllowedGrants'));
  });
}
