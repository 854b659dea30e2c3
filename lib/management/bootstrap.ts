import type { Knex } from 'knex';

import { buildApplication } from '../applications/applications.ts';
import { findApplication, insertApplication, updateApplication } from '../applications/queries.ts';
import type { Config } from '../config/env.ts';
import { type NoticeStream, writeOneTimeSecret } from '../http/logger.ts';
import { setResourceIndicator } from '../resources/queries.ts';
import { addRolesToApplication } from '../roles/assignments.ts';
import { applicationIdsOfRole } from '../roles/queries.ts';
import { managementApi } from '../shared/management-api.ts';
import { generateSecret } from '../storage/ids.ts';
import { lockCache } from '../storage/shared-cache.ts';
import { withTransaction } from '../storage/transaction.ts';

/** The management API's indicator follows MANAGEMENT_API_RESOURCE (it defaults to $ENDPOINT/api). */
export async function syncManagementApiIndicator(db: Knex, indicator: string): Promise<void> {
  await setResourceIndicator(db, managementApi.resourceId, indicator);
}

/**
 * Makes sure an administrator can reach the management API: the configured bootstrap application,
 * or, on a first start without one, a generated application whose credentials are printed once, by
 * the one instance that created it, to the notices (stderr), never to the log.
 */
export async function ensureBootstrapAdmin(db: Knex, config: Config, notices: NoticeStream): Promise<void> {
  const created = await withTransaction(db, async (trx) => {
    await lockCache(trx, 'applications');
    const wanted = config.bootstrapAdmin;
    if (wanted) {
      const existing = await findApplication(trx, wanted.clientId);
      if (!existing) {
        await insertApplication(
          trx,
          buildApplication({
            id: wanted.clientId,
            secret: wanted.clientSecret,
            name: 'Bootstrap admin',
            type: 'MachineToMachine',
          }),
        );
      } else if (existing.secret !== wanted.clientSecret) {
        await updateApplication(trx, { ...existing, secret: wanted.clientSecret });
      }
      await addRolesToApplication(trx, wanted.clientId, [managementApi.roleId]);
      return undefined;
    }
    if ((await applicationIdsOfRole(trx, managementApi.roleId)).length > 0) {
      return undefined;
    }
    // A legacy secret, printed once below: the operator has no other way to read it.
    const secret = generateSecret();
    const application = buildApplication({ name: 'Admin (created at first start)', type: 'MachineToMachine', secret });
    await insertApplication(trx, application);
    await addRolesToApplication(trx, application.id, [managementApi.roleId]);
    return { id: application.id, secret };
  });
  if (created) {
    writeOneTimeSecret(notices, config.production, 'Management API credentials (shown once)', {
      clientId: created.id,
      clientSecret: created.secret,
      resource: config.managementApiResource,
      scope: 'all',
    });
  }
}
