import { z } from 'zod';

import type { ExperienceContext } from '../experience/context.ts';
import { recordUserDataEvent } from '../experience/events.ts';
import type { Api } from '../http/api/route.ts';
import { assertFieldEditable, assertFieldEnabled } from '../sign-in-experience/account-center/account-center.ts';
import type { AccountCenter, AccountCenterField } from '../sign-in-experience/account-center/account-center-schemas.ts';
import { withTransaction } from '../storage/transaction.ts';
import { logtoConfigBody, logtoConfigChanges, logtoConfigOf, logtoConfigSchema } from '../users/logto-config.ts';
import { changeUser, getUserRow } from '../users/users.ts';
import { accountSession, assertScope } from './auth.ts';
import { proofHeader, requireIdentityProof } from './verifications.ts';

const tag = 'Account MFA';
const mfaSettings = z.object({ skipMfaOnSignIn: z.boolean() });

/** The passkey prompt follows `passkey`, or `mfa` where `passkey` is unset (Logto's rule). */
const passkeyField = (center: AccountCenter): AccountCenterField => (center.fields.passkey ? 'passkey' : 'mfa');

/**
 * What the signed-in user chose to skip (Logto's Account API `mfa-settings` and `logto-configs`):
 * read with the `identities` scope, changed with a `logto-verification-id` proof as well.
 */
export function accountSettingsRoutes(api: Api<'own-transactions'>, { db, cache, oidc }: ExperienceContext): void {
  api.add(
    {
      method: 'get',
      path: '/my-account/mfa-settings',
      summary: 'Whether I skip the second factor at sign-in (the `identities` scope)',
      tag,
      response: mfaSettings,
      errors: [400, 401],
    },
    async (_input, ctx) => {
      const session = await accountSession(ctx, db, oidc);
      assertScope(session, 'identities', 401);
      assertFieldEnabled(session.center, 'mfa');
      return { skipMfaOnSignIn: logtoConfigOf(session.user).mfa.skipMfaOnSignIn };
    },
  );

  api.add(
    {
      method: 'patch',
      path: '/my-account/mfa-settings',
      summary: 'Skip the second factor at sign-in, or not (header logto-verification-id)',
      tag,
      body: z.strictObject({ skipMfaOnSignIn: z.boolean() }),
      response: mfaSettings,
      errors: [400, 401],
    },
    async ({ body }, ctx) => {
      const session = await accountSession(ctx, db, oidc);
      await requireIdentityProof(db, session.user, proofHeader(ctx));
      assertScope(session, 'identities', 401);
      assertFieldEditable(session.center, 'mfa');
      await withTransaction(db, async (trx) => {
        await changeUser(trx, session.user.id, { mfaSkippedOnSignIn: body.skipMfaOnSignIn });
        await recordUserDataEvent(trx, cache, ctx, 'User.Data.Updated', session.user.id);
      });
      return body;
    },
  );

  api.add(
    {
      method: 'get',
      path: '/my-account/logto-configs',
      summary: 'The MFA and passkey sign-in prompts I skipped (the `identities` scope)',
      tag,
      response: logtoConfigSchema,
      errors: [400, 401],
    },
    async (_input, ctx) => {
      const session = await accountSession(ctx, db, oidc);
      assertScope(session, 'identities', 401);
      assertFieldEnabled(session.center, passkeyField(session.center));
      return logtoConfigOf(session.user);
    },
  );

  api.add(
    {
      method: 'patch',
      path: '/my-account/logto-configs',
      summary:
        'Skip the MFA or passkey sign-in prompt, or not (header logto-verification-id; fields left out are kept)',
      tag,
      body: logtoConfigBody,
      response: logtoConfigSchema,
      errors: [400, 401],
    },
    async ({ body }, ctx) => {
      const session = await accountSession(ctx, db, oidc);
      await requireIdentityProof(db, session.user, proofHeader(ctx));
      assertScope(session, 'identities', 401);
      assertFieldEditable(session.center, passkeyField(session.center));
      await withTransaction(db, async (trx) => {
        await changeUser(trx, session.user.id, logtoConfigChanges(body));
        await recordUserDataEvent(trx, cache, ctx, 'User.Data.Updated', session.user.id);
      });
      return logtoConfigOf(await getUserRow(db, session.user.id));
    },
  );
}
