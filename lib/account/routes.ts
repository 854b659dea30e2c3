import { z } from 'zod';

import type { ExperienceContext } from '../experience/context.ts';
import { recordExceptionEvent, recordUserDataEvent } from '../experience/events.ts';
import { codeIdentifierSchema, sendEndUserCode, verifyCodeGuarded } from '../experience/guarded-checks.ts';
import { accountTarget, assertNotLocked, failVerification, recordSuccess } from '../experience/lockout/lockout.ts';
import type { Api } from '../http/api/route.ts';
import { RequestError } from '../http/errors.ts';
import { provisionByEmailDomain } from '../organizations/jit/jit-provisioning.ts';
import { assertFieldEditable } from '../sign-in-experience/account-center/account-center.ts';
import { assertEmailAllowed } from '../sign-in-experience/email-blocklist.ts';
import { assertPasswordAccepted } from '../sign-in-experience/password-policy.ts';
import { pwnedPasswordLookup } from '../sign-in-experience/pwned-passwords.ts';
import { currentSignInExperience } from '../sign-in-experience/sign-in-experience.ts';
import { withTransaction } from '../storage/transaction.ts';
import { hashPassword } from '../users/passwords.ts';
import type { UserRow } from '../users/queries.ts';
import { email, phone } from '../users/schemas.ts';
import {
  assertSignInMethodLeft,
  changeUser,
  getUserRowForUpdate,
  userInfoOf,
  verifyUserPassword,
} from '../users/users.ts';
import { accountSession, assertScope } from './auth.ts';
import { consumeVerifications, markVerified } from './verification-queries.ts';
import { createVerification, getVerification, proofHeader, requireIdentityProof } from './verifications.ts';

const tag = 'Account';
const created = z.object({ verificationRecordId: z.string(), expiresAt: z.string() });

/** The identifier an Identifier.Lockout names when the Account API's password check locks the account. */
const lockoutIdentifierOf = (user: UserRow) =>
  user.username
    ? { type: 'username', value: user.username }
    : user.primary_email
      ? { type: 'email', value: user.primary_email }
      : user.primary_phone
        ? { type: 'phone', value: user.primary_phone }
        : { type: 'userId', value: user.id };

/** Self-service for the signed-in user (Logto's Account API): verifications, then the email, phone and password changes that need them. */
export function accountRoutes(
  api: Api<'own-transactions'>,
  { db, cache, oidc, messages: connectors, config, logger }: ExperienceContext,
): void {
  const isPwned = pwnedPasswordLookup(config.pwnedPasswordsUrl, logger);
  api.add(
    {
      method: 'post',
      path: '/verifications/password',
      summary: "Verify the signed-in user's password",
      tag,
      body: z.strictObject({ password: z.string().min(1).max(256) }),
      response: created,
      status: 201,
      errors: [401, 422],
    },
    async ({ body }, ctx) => {
      const { user } = await accountSession(ctx, db, oidc);
      // The same lock as the account's sign-in: guessing here must not add to the attempts there.
      const target = accountTarget(user.id);
      await assertNotLocked(db, target);
      if (!(await verifyUserPassword(db, user, body.password))) {
        const { sentinelPolicy } = await currentSignInExperience(db, cache);
        return failVerification(
          db,
          target,
          sentinelPolicy,
          new RequestError('session.invalid_credentials', { reason: 'Wrong password.' }),
          () => recordExceptionEvent(db, cache, 'Identifier.Lockout', lockoutIdentifierOf(user)),
        );
      }
      await recordSuccess(db, target);
      const record = await createVerification(db, user.id, { type: 'Password', verified: true });
      return { verificationRecordId: record.id, expiresAt: new Date(record.expiresAt).toISOString() };
    },
  );

  api.add(
    {
      method: 'post',
      path: '/verifications/verification-code',
      summary: 'Send a code to an email or phone (to prove it is yours)',
      tag,
      body: z.strictObject({ identifier: codeIdentifierSchema }),
      response: created,
      status: 201,
      errors: [401, 429],
    },
    async ({ body }, ctx) => {
      const { user } = await accountSession(ctx, db, oidc);
      const { codeId } = await sendEndUserCode(db, cache, connectors, body.identifier, 'Generic');
      const record = await createVerification(db, user.id, {
        type: body.identifier.type === 'email' ? 'EmailVerificationCode' : 'PhoneVerificationCode',
        identifier: body.identifier,
        codeId,
        verified: false,
      });
      return { verificationRecordId: record.id, expiresAt: new Date(record.expiresAt).toISOString() };
    },
  );

  api.add(
    {
      method: 'post',
      path: '/verifications/verification-code/verify',
      summary: 'Verify a code sent to an email or phone',
      tag,
      body: z.strictObject({
        identifier: codeIdentifierSchema,
        verificationId: z.string().min(1).max(64),
        code: z.string().min(1).max(16),
      }),
      response: z.object({ verificationRecordId: z.string() }),
      errors: [401, 404],
    },
    async ({ body }, ctx) => {
      const { user } = await accountSession(ctx, db, oidc);
      const record = await getVerification(db, user.id, body.verificationId);
      if (
        !record.codeId ||
        record.identifier?.type !== body.identifier.type ||
        record.identifier.value !== body.identifier.value
      ) {
        throw new RequestError('verification_record.not_found');
      }
      const { sentinelPolicy } = await currentSignInExperience(db, cache);
      await verifyCodeGuarded(db, cache, sentinelPolicy, {
        codeId: record.codeId,
        identifier: body.identifier,
        code: body.code,
      });
      await markVerified(db, record.id);
      return { verificationRecordId: record.id };
    },
  );

  /** A new email or phone: proven by a code sent to it, after the user proved who they are. */
  for (const kind of ['email', 'phone'] as const) {
    const field = kind === 'email' ? 'primaryEmail' : 'primaryPhone';
    api.add(
      {
        method: 'post',
        path: `/my-account/primary-${kind}`,
        summary: `Set the primary ${kind} (header logto-verification-id: a fresh identity proof)`,
        tag,
        body: z.strictObject({
          [kind]: kind === 'email' ? email : phone,
          newIdentifierVerificationRecordId: z.string().min(1).max(64),
        }),
        errors: [400, 401, 404, 422],
      },
      async ({ body }, ctx) => {
        const session = await accountSession(ctx, db, oidc);
        const { user, center } = session;
        assertFieldEditable(center, kind);
        assertScope(session, kind);
        await requireIdentityProof(db, user, proofHeader(ctx));
        const value = body[kind];
        const ownership = await getVerification(db, user.id, body.newIdentifierVerificationRecordId);
        if (!ownership.verified || ownership.identifier?.type !== kind || ownership.identifier.value !== value) {
          throw new RequestError('verification_record.permission_denied', {
            reason: `The new ${kind} has not been verified.`,
          });
        }
        if (kind === 'email') {
          assertEmailAllowed((await currentSignInExperience(db, cache)).emailBlocklistPolicy, value);
        }
        await withTransaction(db, async (trx) => {
          await changeUser(trx, user.id, { [field]: value });
          await consumeVerifications(trx, [ownership.id]);
          await recordUserDataEvent(trx, cache, ctx, 'User.Data.Updated', user.id);
          if (kind === 'email') {
            await provisionByEmailDomain(trx, cache, ctx, user.id, value);
          }
        });
      },
    );

    api.add(
      {
        method: 'delete',
        path: `/my-account/primary-${kind}`,
        summary: `Remove the primary ${kind} (header logto-verification-id)`,
        tag,
        errors: [400, 401, 404],
      },
      async (_input, ctx) => {
        const session = await accountSession(ctx, db, oidc);
        const { user, center } = session;
        assertFieldEditable(center, kind);
        assertScope(session, kind);
        await requireIdentityProof(db, user, proofHeader(ctx));
        await withTransaction(db, async (trx) => {
          // On the locked row: two removals at once must not leave the account with no way in.
          await assertSignInMethodLeft(trx, await getUserRowForUpdate(trx, user.id), field);
          await changeUser(trx, user.id, { [field]: null });
          await recordUserDataEvent(trx, cache, ctx, 'User.Data.Updated', user.id);
        });
      },
    );
  }

  api.add(
    {
      method: 'post',
      path: '/my-account/password',
      summary: 'Set a new password (header logto-verification-id, unless the account has no password, email or phone)',
      tag,
      body: z.strictObject({ password: z.string().min(1).max(256) }),
      errors: [400, 401, 404, 422],
    },
    async ({ body }, ctx) => {
      const { user, center } = await accountSession(ctx, db, oidc);
      assertFieldEditable(center, 'password');
      // Logto's rule: an account with no password, email or phone (signed up through a social or
      // enterprise IdP) has nothing to prove with, and sets its first password with the token alone.
      if (user.password_digest || user.primary_email || user.primary_phone) {
        await requireIdentityProof(db, user, proofHeader(ctx));
      }
      const { passwordPolicy } = await currentSignInExperience(db, cache);
      await assertPasswordAccepted(body.password, { policy: passwordPolicy, isPwned }, userInfoOf(user));
      const digest = await hashPassword(body.password);
      await withTransaction(db, async (trx) => {
        await changeUser(trx, user.id, { passwordDigest: digest });
        await recordUserDataEvent(trx, cache, ctx, 'User.Data.Updated', user.id);
      });
    },
  );
}
