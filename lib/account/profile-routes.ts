import { z } from 'zod';

import type { ExperienceContext } from '../experience/context.ts';
import { recordUserDataEvent } from '../experience/events.ts';
import type { Api } from '../http/api/route.ts';
import { customDataInput } from '../http/limits.ts';
import { assertFieldEditable } from '../sign-in-experience/account-center/account-center.ts';
import { currentSignInExperience } from '../sign-in-experience/sign-in-experience.ts';
import { assertUsernameAllowed } from '../sign-in-experience/username-policy.ts';
import { withTransaction } from '../storage/transaction.ts';
import { profileOfRow } from '../users/queries.ts';
import { updateUserBody, userProfileSchema } from '../users/schemas.ts';
import { assertSignInMethodLeft, changeUser, getUserRow, getUserRowForUpdate } from '../users/users.ts';
import { accountView, accountViewSchema } from './account-view.ts';
import { type AccountSession, accountSession, assertScope } from './auth.ts';
import { proofHeader, requireIdentityProof } from './verifications.ts';

const tag = 'Account';

/** The signed-in user's name, avatar, username, custom data and OpenID profile (Logto's Account API). */
export function accountProfileRoutes(api: Api<'own-transactions'>, { db, cache, oidc }: ExperienceContext): void {
  /** The account after a change, read again: what the owner's scopes and the account center let them see. */
  const viewAfter = async (session: AccountSession) => accountView(db, session, await getUserRow(db, session.user.id));

  api.add(
    {
      method: 'get',
      path: '/my-account',
      summary: "The signed-in user's account: the parts the token's scopes and the account center show",
      tag,
      response: accountViewSchema,
      errors: [400, 401],
    },
    async (_input, ctx) => {
      const session = await accountSession(ctx, db, oidc);
      return accountView(db, session, session.user);
    },
  );

  api.add(
    {
      method: 'patch',
      path: '/my-account',
      summary:
        'Change my name, avatar, username (with a logto-verification-id proof) or custom data (the `custom_data` scope; replaced)',
      tag,
      body: z.strictObject({
        name: updateUserBody.shape.name,
        avatar: updateUserBody.shape.avatar,
        username: updateUserBody.shape.username,
        customData: customDataInput.optional(),
      }),
      response: accountViewSchema,
      errors: [400, 401, 422],
    },
    async ({ body }, ctx) => {
      const session = await accountSession(ctx, db, oidc);
      for (const field of ['name', 'avatar', 'username', 'customData'] as const) {
        if (body[field] !== undefined) {
          assertFieldEditable(session.center, field);
        }
      }
      assertScope(session, 'profile');
      if (body.customData !== undefined) {
        assertScope(session, 'custom_data');
      }
      // A username is a sign-in identifier: changing it takes the proof an email change takes.
      if (body.username !== undefined) {
        await requireIdentityProof(db, session.user, proofHeader(ctx));
        if (body.username !== null) {
          assertUsernameAllowed(body.username, (await currentSignInExperience(db, cache)).usernamePolicy);
        }
      }
      await withTransaction(db, async (trx) => {
        if (body.username === null) {
          // On the locked row: two removals at once must not leave the account with no way in.
          await assertSignInMethodLeft(trx, await getUserRowForUpdate(trx, session.user.id), 'username');
        }
        await changeUser(trx, session.user.id, body);
        await recordUserDataEvent(trx, cache, ctx, 'User.Data.Updated', session.user.id);
      });
      return viewAfter(session);
    },
  );

  api.add(
    {
      method: 'patch',
      path: '/my-account/profile',
      summary: 'Merge fields into my OpenID profile (the `profile` scope; `address` also needs the `address` scope)',
      tag,
      body: userProfileSchema,
      response: userProfileSchema,
      errors: [400, 401],
    },
    async ({ body }, ctx) => {
      const session = await accountSession(ctx, db, oidc);
      assertFieldEditable(session.center, 'profile');
      assertScope(session, 'profile');
      if (body.address !== undefined) {
        assertScope(session, 'address');
      }
      await withTransaction(db, async (trx) => {
        const current = await getUserRowForUpdate(trx, session.user.id);
        await changeUser(trx, session.user.id, { profile: { ...profileOfRow(current), ...body } });
        await recordUserDataEvent(trx, cache, ctx, 'User.Data.Updated', session.user.id);
      });
      return (await viewAfter(session)).profile ?? {};
    },
  );
}
