import type { AdapterPayload } from 'oidc-provider';
import { z } from 'zod';

import { findApplication } from '../applications/queries.ts';
import { isUrlClientId } from '../shared/url-client-ids.ts';
import type { Queryable } from '../storage/database.ts';
import { revokeUserGrant } from './grants.ts';
import { deleteSessionOfAccount, listSessionsOfAccount } from './queries.ts';

/**
 * Logto's user session as its management API shows it: the provider's session document without
 * its `jti`, which is the session's id and the value of the browser's session cookie (whoever reads
 * it could ride the session), named by its `uid` instead.
 */
export const userSessionSchema = z.object({
  payload: z.looseObject({
    uid: z.string(),
    accountId: z.string(),
    authorizations: z.record(z.string(), z.looseObject({ grantId: z.string().optional() })).optional(),
  }),
  accountId: z.string(),
  /** Logto's record of the interaction that signed the person in: not kept here. */
  lastSubmission: z.null(),
  /** The application the session was first signed into. */
  clientId: z.string().nullable(),
  expiresAt: z.number(),
});
export type UserSession = z.output<typeof userSessionSchema>;

type Authorizations = Record<string, { grantId?: string }>;
const authorizationsOf = (payload: AdapterPayload): Authorizations => payload.authorizations ?? {};

function toUserSession(
  accountId: string,
  { payload, expiresAt }: { payload: AdapterPayload; expiresAt: number },
): UserSession {
  const shown: Record<string, unknown> = { ...payload };
  delete shown.jti;
  return {
    payload: { ...shown, uid: String(payload.uid), accountId, authorizations: authorizationsOf(payload) },
    accountId,
    lastSubmission: null,
    clientId: Object.keys(authorizationsOf(payload))[0] ?? null,
    expiresAt,
  };
}

export async function listUserSessions(db: Queryable, userId: string): Promise<UserSession[]> {
  return (await listSessionsOfAccount(db, userId)).map((session) => toUserSession(userId, session));
}

export async function findUserSession(db: Queryable, userId: string, uid: string): Promise<UserSession | undefined> {
  return (await listUserSessions(db, userId)).find((session) => session.payload.uid === uid);
}

export const revokeGrantsTargets = ['all', 'firstParty'] as const;

/**
 * Ends one of the user's sessions; with `revokeGrantsTarget`, also the grants it made (and their
 * tokens): all of them, or those of first-party applications only (a third party keeps the access
 * the person gave it). False when the user holds no such session.
 */
export async function revokeUserSession(
  db: Queryable,
  userId: string,
  uid: string,
  revokeGrantsTarget?: (typeof revokeGrantsTargets)[number],
): Promise<boolean> {
  const session = await findUserSession(db, userId, uid);
  if (!session || !(await deleteSessionOfAccount(db, userId, uid))) {
    return false;
  }
  if (revokeGrantsTarget) {
    for (const [clientId, { grantId }] of Object.entries(session.payload.authorizations ?? {})) {
      const thirdParty = isUrlClientId(clientId) || ((await findApplication(db, clientId))?.isThirdParty ?? false);
      if (grantId && (revokeGrantsTarget === 'all' || !thirdParty)) {
        await revokeUserGrant(db, userId, grantId);
      }
    }
  }
  return true;
}
