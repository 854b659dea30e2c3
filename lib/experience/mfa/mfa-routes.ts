import { z } from 'zod';

import type { Api } from '../../http/api/route.ts';
import { RequestError } from '../../http/errors.ts';
import { newBackupCodes } from '../../mfa/backup-codes.ts';
import { mayDecline } from '../../mfa/sign-in-requirement.ts';
import { acceptedStep, newTotpSecret, totpEnrolment } from '../../mfa/totp.ts';
import { isMemberOfMfaOrganization } from '../../organizations/members/member-queries.ts';
import { currentSignInExperience } from '../../sign-in-experience/sign-in-experience.ts';
import { generateId } from '../../storage/ids.ts';
import { getUserRow } from '../../users/users.ts';
import type { ExperienceContext } from '../context.ts';
import { getRecord } from '../state.ts';
import { bindFactor } from './mfa-binding.ts';
import { identifiedUser, mfaTag, saveRecord, verificationResponse, verifiedInteraction } from './mfa-steps.ts';
import { verifySecondFactor } from './second-factor.ts';

const code = z.string().min(1).max(32);

/**
 * TOTP and backup codes in the sign-in flow: enrol (secret, codes), prove, bind at submit (passkeys
 * and email or phone codes too), or decline. A secret or codes are made while the factor is off, as
 * in Logto: binding checks that it is on (mfa-binding.ts).
 */
export function experienceMfaRoutes(
  api: Api<'own-transactions'>,
  { db, cache, sessions, config }: ExperienceContext,
): void {
  api.add(
    {
      method: 'post',
      path: '/experience/verification/totp/secret',
      summary: 'Start enrolling an authenticator app: a new secret and its otpauth:// QR code',
      tag: mfaTag,
      response: z.object({ verificationId: z.string(), secret: z.string(), secretQrCode: z.string() }),
      errors: [404, 422],
    },
    async (_input, ctx) => {
      const session = await sessions.load(ctx);
      const userId = identifiedUser(session);
      const user = await getUserRow(db, userId);
      const secret = newTotpSecret();
      const { secretQrCode } = await totpEnrolment(
        secret,
        new URL(config.endpoint).host,
        user.username ?? user.primary_email ?? user.primary_phone ?? user.id,
      );
      const verificationId = await saveRecord(session, {
        id: generateId(),
        type: 'Totp',
        userId,
        secret,
        verified: false,
      });
      return { verificationId, secret, secretQrCode };
    },
  );

  api.add(
    {
      method: 'post',
      path: '/experience/verification/totp/verify',
      summary:
        "Verify a TOTP code: of the secret being enrolled (with its verificationId), or of the user's authenticator",
      tag: mfaTag,
      body: z.strictObject({ code, verificationId: z.string().min(1).max(64).optional() }),
      response: verificationResponse,
      errors: [404],
    },
    async ({ body }, ctx) => {
      const session = await sessions.load(ctx);
      const userId = identifiedUser(session);
      if (body.verificationId) {
        const record = getRecord(session.state, body.verificationId);
        if (record.type !== 'Totp' || !record.secret || record.userId !== userId) {
          throw new RequestError('session.verification_session_not_found');
        }
        const step = acceptedStep(record.secret, body.code.trim(), null);
        if (step === undefined) {
          throw new RequestError('session.mfa.invalid_totp_code');
        }
        return { verificationId: await saveRecord(session, { ...record, step, verified: true }) };
      }
      const { sentinelPolicy } = await currentSignInExperience(db, cache);
      await verifySecondFactor(db, cache, sentinelPolicy, userId, { type: 'Totp', code: body.code });
      const verificationId = await saveRecord(
        session,
        { id: generateId(), type: 'Totp', userId, verified: true },
        { mfa: { ...session.state.mfa, verified: true } },
      );
      return { verificationId };
    },
  );

  api.add(
    {
      method: 'post',
      path: '/experience/verification/backup-code/generate',
      summary: 'New backup codes (shown once; bound with POST /experience/profile/mfa)',
      tag: mfaTag,
      response: z.object({ verificationId: z.string(), codes: z.array(z.string()) }),
      errors: [404],
    },
    async (_input, ctx) => {
      const session = await sessions.load(ctx);
      const userId = identifiedUser(session);
      const codes = newBackupCodes();
      const verificationId = await saveRecord(session, {
        id: generateId(),
        type: 'BackupCode',
        userId,
        codes,
        verified: true,
      });
      return { verificationId, codes };
    },
  );

  api.add(
    {
      method: 'post',
      path: '/experience/verification/backup-code/verify',
      summary: "Prove the second factor with one of the user's backup codes (it is used up)",
      tag: mfaTag,
      body: z.strictObject({ code }),
      response: verificationResponse,
      errors: [404],
    },
    async ({ body }, ctx) => {
      const session = await sessions.load(ctx);
      const userId = identifiedUser(session);
      const { sentinelPolicy } = await currentSignInExperience(db, cache);
      await verifySecondFactor(db, cache, sentinelPolicy, userId, { type: 'BackupCode', code: body.code });
      const verificationId = await saveRecord(
        session,
        { id: generateId(), type: 'BackupCode', userId, verified: true },
        { mfa: { ...session.state.mfa, verified: true } },
      );
      return { verificationId };
    },
  );

  api.add(
    {
      method: 'post',
      path: '/experience/profile/mfa',
      summary: 'Bind an enrolled factor to the account (applied at submit)',
      tag: mfaTag,
      body: z.strictObject({
        type: z.enum(['Totp', 'WebAuthn', 'BackupCode', 'EmailVerificationCode', 'PhoneVerificationCode']),
        verificationId: z.string().min(1).max(64),
      }),
      errors: [400, 403, 404, 422],
    },
    async ({ body }, ctx) => {
      const session = await sessions.load(ctx);
      const user = await verifiedInteraction(db, cache, session);
      const settings = await currentSignInExperience(db, cache);
      await session.save(await bindFactor(db, cache, settings, session.state, user, body));
    },
  );

  api.add(
    {
      method: 'post',
      path: '/experience/profile/mfa/mfa-skipped',
      summary:
        'Decline the optional second factor (a prompting policy, such as PromptAtSignInAndSignUp); not asked again',
      tag: mfaTag,
      errors: [400, 403, 404, 422],
    },
    async (_input, ctx) => {
      const session = await sessions.load(ctx);
      const user = await verifiedInteraction(db, cache, session);
      const { mfa } = await currentSignInExperience(db, cache);
      const requiredByOrganization =
        mfa.organizationRequiredMfaPolicy !== 'NoPrompt' && (await isMemberOfMfaOrganization(db, user.id));
      if (!mayDecline(mfa.policy) || requiredByOrganization) {
        throw new RequestError('session.mfa.mfa_policy_not_user_controlled');
      }
      await session.save({ ...session.state, mfa: { ...session.state.mfa, skipped: true } });
    },
  );

  /** A choice about second factors that the interaction remembers until submit. */
  const choice = (path: string, summary: string, flag: 'enabled' | 'suggestionSkipped') =>
    api.add({ method: 'post', path, summary, tag: mfaTag, errors: [400, 403, 404] }, async (_input, ctx) => {
      const session = await sessions.load(ctx);
      await verifiedInteraction(db, cache, session);
      await session.save({ ...session.state, mfa: { ...session.state.mfa, [flag]: true } });
    });
  choice(
    '/experience/profile/mfa/mfa-enabled',
    'Choose to set up a second factor (a suggestion becomes a prompt to enrol one)',
    'enabled',
  );
  choice(
    '/experience/profile/mfa/mfa-suggestion-skipped',
    'Decline the suggestion of another second factor (session.mfa.suggest_additional_mfa)',
    'suggestionSkipped',
  );
}
