import type { Context } from 'koa';

import { bearerToken } from '../http/api/bearer.ts';
import { RequestError } from '../http/errors.ts';
import { policyOf } from '../oidc/clients/application-policy.ts';
import type { OidcService } from '../oidc/mount.ts';
import { noteAuditSubject } from '../shared/request-subject.ts';
import {
  assertAccountCenterEnabled,
  currentAccountCenter,
} from '../sign-in-experience/account-center/account-center.ts';
import type { AccountCenter } from '../sign-in-experience/account-center/account-center-schemas.ts';
import type { Queryable } from '../storage/database.ts';
import type { UserRow } from '../users/queries.ts';
import { findUserRow } from '../users/queries.ts';

/** Who calls the Account API: the user, the account center's settings, what their token was granted. */
export type AccountSession = {
  user: UserRow;
  center: AccountCenter;
  scopes: ReadonlySet<string>;
  /** The sign-in session the token came from (`isCurrent` in the session list), when it came from one. */
  sessionUid: string | undefined;
};

/**
 * The Account API acts as the signed-in user: a Bearer opaque access token of ours, unexpired,
 * granted `openid`, for an active user, not DPoP-bound, while the account center is enabled; only
 * reads for a third-party application's token. The provider finds it among its stored tokens (it checks
 * no JWT itself), so a revocation at /oidc/token/revocation ends it at once.
 */
export async function accountSession(ctx: Context, db: Queryable, oidc: OidcService): Promise<AccountSession> {
  const value = bearerToken(ctx.get('authorization'));
  const provider = await oidc.provider();
  const token = await provider.AccessToken.find(value);
  const user = token?.accountId && token.scopes.has('openid') ? await findUserRow(db, token.accountId) : undefined;
  if (!token || !user || user.is_suspended) {
    throw new RequestError('auth.unauthorized', {
      reason: 'Unauthorized. A valid access token with `openid` is required.',
    });
  }
  // RFC 9449 §7.2: a DPoP-bound token must not be accepted as a Bearer token; this API checks no proofs.
  if (token.isSenderConstrained()) {
    throw new RequestError('auth.unauthorized', {
      reason: 'Unauthorized: the token is DPoP-bound; the Account API takes Bearer tokens only.',
    });
  }
  // Logto's guard: a third-party application reads what it was granted, and changes nothing (not
  // even a verification record, which would open the changes).
  if (ctx.method !== 'GET') {
    const client = token.clientId ? await provider.Client.find(token.clientId) : undefined;
    if (!client || policyOf(client).isThirdParty) {
      throw new RequestError('auth.third_party_application_forbidden');
    }
  }
  noteAuditSubject(ctx, { kind: 'account', userId: user.id, applicationId: token.clientId });
  const center = await currentAccountCenter(db);
  assertAccountCenterEnabled(center);
  return { user, center, scopes: token.scopes, sessionUid: token.sessionUid };
}

/**
 * A part of the account the token was not granted (`custom_data`, `identities`, ...): refused with
 * Logto's status for that route, 400 for profile data, 401 for identities and sessions.
 */
export function assertScope({ scopes }: AccountSession, scope: string, status: 400 | 401 = 400): void {
  if (!scopes.has(scope)) {
    throw new RequestError(
      'auth.unauthorized',
      { reason: `Unauthorized: the access token was not granted the \`${scope}\` scope.` },
      status === 400 ? { status } : undefined,
    );
  }
}
