import { z } from 'zod';

import { currentSignInExperience } from '../sign-in-experience/sign-in-experience.ts';
import { getRecord } from './state.ts';
import { RequestError } from '../http/errors.ts';
import type { Api } from '../http/route.ts';
import type { ExperienceContext } from './context.ts';
import { identifiedUser, mfaTag, saveRecord, verificationResponse } from './mfa-steps.ts';
import { generateId } from '../storage/ids.ts';
import { getUserRow } from '../users/users.ts';
import { newBackupCodes } from '../mfa/backup-codes.ts';
import { factorTypes, findFactor } from '../mfa/queries.ts';
import { verifySecondFactor } from './second-factor.ts';
import { enabledFactors, isSkippablePrompt } from '../mfa/sign-in-requirement.ts';
import { acceptedStep, newTotpSecret, totpEnrolment } from '../mfa/totp.ts';

const code = z.string().min(1).max(32);

/**
 * TOTP and backup codes in the sign-in flow: enrol (secret, codes), prove, bind at submit (passkeys
 * too: mfa-web-authn-routes.ts), or decline.
 */
export function experienceMfaRoutes(
  api: Api<'own-transactions'>,
  { db, cache, sessions, config }: ExperienceContext,
): void {
  async function assertFactorEnabled(type: 'Totp' | 'BackupCode'): Promise<void> {
    if (!enabledFactors(await currentSignInExperience(db, cache)).includes(type)) {
      throw new RequestError('session.mfa.mfa_factor_not_enabled', {
        reason: `${type} is not enabled in the sign-in experience.`,
      });
    }
  }

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
      await assertFactorEnabled('Totp');
      if (await findFactor(db, userId, 'Totp')) {
        throw new RequestError('user.totp_already_in_use');
      }
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
          throw new RequestError('session.verification_failed', {
            reason: 'This verification is not an authenticator enrolment.',
          });
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
      await assertFactorEnabled('BackupCode');
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
      errors: [404, 422],
    },
    async ({ body }, ctx) => {
      const session = await sessions.load(ctx);
      const userId = identifiedUser(session);
      if (!(factorTypes as readonly string[]).includes(body.type)) {
        throw new RequestError('session.mfa.mfa_factor_not_enabled', { reason: `${body.type} is not supported.` });
      }
      const record = getRecord(session.state, body.verificationId);
      const mfa = { ...session.state.mfa };
      if (
        record.type === 'Totp' &&
        body.type === 'Totp' &&
        record.secret &&
        record.step !== undefined &&
        record.verified &&
        record.userId === userId
      ) {
        mfa.totp = { secret: record.secret, step: record.step };
      } else if (
        record.type === 'WebAuthn' &&
        body.type === 'WebAuthn' &&
        record.passkey &&
        record.verified &&
        record.userId === userId
      ) {
        const { passkey } = record;
        mfa.webAuthn = [
          ...(mfa.webAuthn ?? []).filter((bound) => bound.credentialId !== passkey.credentialId),
          passkey,
        ];
      } else if (
        record.type === 'BackupCode' &&
        body.type === 'BackupCode' &&
        record.codes &&
        record.userId === userId
      ) {
        mfa.backupCodes = record.codes;
      } else {
        throw new RequestError('session.verification_failed', {
          reason: `This verification is not a completed ${body.type} enrolment.`,
        });
      }
      await session.save({ ...session.state, mfa });
    },
  );

  api.add(
    {
      method: 'post',
      path: '/experience/profile/mfa/mfa-skipped',
      summary:
        'Decline the optional second factor (a prompting policy, such as PromptAtSignInAndSignUp); not asked again',
      tag: mfaTag,
      errors: [404, 422],
    },
    async (_input, ctx) => {
      const session = await sessions.load(ctx);
      identifiedUser(session);
      const settings = await currentSignInExperience(db, cache);
      if (!isSkippablePrompt(settings.mfa.policy)) {
        throw new RequestError('session.mfa.mfa_policy_not_user_controlled');
      }
      await session.save({ ...session.state, mfa: { ...session.state.mfa, skipped: true } });
    },
  );
}
