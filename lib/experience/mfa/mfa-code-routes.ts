import { z } from 'zod';

import type { Api } from '../../http/api/route.ts';
import { RequestError } from '../../http/errors.ts';
import { addressFor, codeFactorOf } from '../../mfa/code-factors.ts';
import { enabledFactors } from '../../mfa/sign-in-requirement.ts';
import { currentSignInExperience } from '../../sign-in-experience/sign-in-experience.ts';
import { generateId } from '../../storage/ids.ts';
import { getUserRow } from '../../users/users.ts';
import type { ExperienceContext } from '../context.ts';
import { sendEndUserCode } from '../guarded-checks.ts';
import { getRecord } from '../state.ts';
import { messageAbout } from '../verification/message-about.ts';
import { identifiedUser, mfaTag, verificationResponse } from './mfa-steps.ts';
import { verifySecondFactorCode } from './second-factor.ts';

const identifierType = z.enum(['email', 'phone']);

/** The second factor belongs to the user identified; before that there is no one to send to. */

/**
 * Email and phone codes as second factors (Logto's `mfa-verification-code` routes): the code goes
 * to the identified user's own primary email or phone, never to an address the caller names.
 */
export function experienceMfaCodeRoutes(
  api: Api<'own-transactions'>,
  { db, cache, sessions, messages: connectors }: ExperienceContext,
): void {
  api.add(
    {
      method: 'post',
      path: '/experience/verification/mfa-verification-code',
      summary: "Send a second-factor code to the identified user's email or phone",
      tag: mfaTag,
      body: z.strictObject({ identifierType }),
      response: verificationResponse,
      errors: [404, 429],
    },
    async ({ body }, ctx) => {
      const session = await sessions.load(ctx);
      const userId = identifiedUser(session);
      const factor = codeFactorOf(body.identifierType);
      if (!enabledFactors(await currentSignInExperience(db, cache)).includes(factor)) {
        throw new RequestError('session.mfa.mfa_factor_not_enabled', {
          reason: `${factor} is not enabled in the sign-in experience.`,
        });
      }
      const user = await getUserRow(db, userId);
      const value = addressFor(factor, { primaryEmail: user.primary_email, primaryPhone: user.primary_phone });
      if (!value) {
        throw new RequestError('session.mfa.mfa_factor_not_enabled', {
          reason: `This account has no ${body.identifierType === 'email' ? 'email address' : 'phone number'}.`,
        });
      }
      const identifier = { type: body.identifierType, value };
      const about = await messageAbout(ctx, { db, cache }, session.interaction, user);
      const { codeId } = await sendEndUserCode(db, cache, connectors, identifier, 'MfaVerification', about);
      const id = generateId();
      session.state.records[id] = {
        id,
        type: body.identifierType === 'email' ? 'MfaEmailVerificationCode' : 'MfaPhoneVerificationCode',
        userId,
        identifier,
        codeId,
        verified: false,
      };
      await session.save(session.state);
      return { verificationId: id };
    },
  );

  api.add(
    {
      method: 'post',
      path: '/experience/verification/mfa-verification-code/verify',
      summary: 'Prove the second factor with the code sent to the email or phone',
      tag: mfaTag,
      body: z.strictObject({
        verificationId: z.string().min(1).max(64),
        code: z.string().min(1).max(16),
        identifierType,
      }),
      response: verificationResponse,
      errors: [404],
    },
    async ({ body }, ctx) => {
      const session = await sessions.load(ctx);
      const userId = identifiedUser(session);
      const record = getRecord(session.state, body.verificationId);
      const expected = body.identifierType === 'email' ? 'MfaEmailVerificationCode' : 'MfaPhoneVerificationCode';
      if (record.type !== expected || record.userId !== userId) {
        throw new RequestError('session.verification_failed', {
          reason: `This verification is not a code sent to the account's ${body.identifierType}.`,
        });
      }
      const { sentinelPolicy } = await currentSignInExperience(db, cache);
      await verifySecondFactorCode(db, cache, sentinelPolicy, userId, {
        codeId: record.codeId,
        identifier: { type: body.identifierType, value: record.identifier.value },
        code: body.code,
      });
      session.state.records[record.id] = { ...record, verified: true };
      await session.save({ ...session.state, mfa: { ...session.state.mfa, verified: true } });
      return { verificationId: record.id };
    },
  );
}
