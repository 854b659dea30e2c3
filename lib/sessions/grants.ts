import { z } from 'zod';

import { findApplication } from '../applications/queries.ts';
import { isUrlClientId } from '../shared/url-client-ids.ts';
import type { Queryable } from '../storage/database.ts';
import { withTransaction } from '../storage/transaction.ts';
import { deleteModel, deleteModelsOfGrant, listGrantsOfAccount } from './queries.ts';

/** Logto's user application grant: the provider's grant document as stored, and when it expires (ms). */
export const grantSchema = z.object({
  id: z.string(),
  payload: z.looseObject({
    exp: z.number(),
    iat: z.number(),
    jti: z.string(),
    kind: z.literal('Grant'),
    clientId: z.string(),
    accountId: z.string(),
  }),
  expiresAt: z.number(),
});

export const grantsResponse = z.object({ grants: z.array(grantSchema) });

/** Logto's `appType` filter of a grant listing. */
export const appTypeQuery = z.object({ appType: z.enum(['firstParty', 'thirdParty']).optional() });

/** The user's grants ("apps with access"), all of them or those of first- or third-party applications. */
export async function listUserGrants(
  db: Queryable,
  userId: string,
  appType?: 'firstParty' | 'thirdParty',
): Promise<Array<z.infer<typeof grantSchema>>> {
  const grants = (await listGrantsOfAccount(db, userId)).map((grant) => grantSchema.parse(grant));
  if (!appType) {
    return grants;
  }
  const thirdParty = new Map<string, boolean>();
  for (const clientId of new Set(grants.map((grant) => grant.payload.clientId))) {
    // A client named by a URL has no application row: no one registered it, so it is a third party.
    thirdParty.set(clientId, isUrlClientId(clientId) || ((await findApplication(db, clientId))?.isThirdParty ?? false));
  }
  return grants.filter((grant) => thirdParty.get(grant.payload.clientId) === (appType === 'thirdParty'));
}

/**
 * Revokes one of the user's grants: the grant and the codes, refresh tokens and opaque access
 * tokens issued under it. The application's next sign-in asks for consent again (if it is one
 * that asks). False when the user holds no such grant.
 */
export async function revokeUserGrant(db: Queryable, userId: string, grantId: string): Promise<boolean> {
  const held = (await listGrantsOfAccount(db, userId)).some((grant) => grant.id === grantId);
  if (!held) {
    return false;
  }
  await withTransaction(db, async (trx) => {
    await deleteModelsOfGrant(trx, grantId);
    await deleteModel(trx, { model: 'Grant', id: grantId });
  });
  return true;
}
