import { z } from 'zod';

import type { ExperienceContext } from '../experience/context.ts';
import { recordUserDataEvent } from '../experience/events.ts';
import type { Api } from '../http/api/route.ts';
import { RequestError } from '../http/errors.ts';
import { newBackupCodes, storedBackupCodes } from '../mfa/backup-codes.ts';
import {
  addFactor,
  assertBackupCodesNotAlone,
  deleteFactor,
  mfaVerificationSchema,
  toMfaVerification,
} from '../mfa/factors.ts';
import { findWebAuthnFactor, listFactors } from '../mfa/queries.ts';
import { acceptedStep, isTotpSecret, newTotpSecret, totpEnrolment } from '../mfa/totp.ts';
import {
  registrationOptions,
  relyingPartyOf,
  verifyRegistration,
  webAuthnRegistrationPayload,
} from '../mfa/webauthn.ts';
import { entityId } from '../shared/entity-id.ts';
import { assertFieldEditable, assertFieldShown } from '../sign-in-experience/account-center/account-center.ts';
import { withTransaction } from '../storage/transaction.ts';
import { accountSession } from './auth.ts';
import { consumeVerifications, markVerified } from './verification-queries.ts';
import { createVerification, getVerification, proofHeader, requireIdentityProof } from './verifications.ts';

const tag = 'Account MFA';

/**
 * The signed-in user manages their own second factors (Logto's Account API). Generating a secret or
 * codes, or registering a passkey, changes nothing; binding or removing one needs a fresh identity
 * proof (`logto-verification-id`) and is a data change of the user (`User.Data.Updated`).
 */
export function accountMfaRoutes(api: Api<'own-transactions'>, { db, cache, oidc, config }: ExperienceContext): void {
  const rp = relyingPartyOf(config.endpoint);

  api.add(
    {
      method: 'post',
      path: '/verifications/web-authn/registration',
      summary: 'Start registering a passkey: options for navigator.credentials.create()',
      tag,
      response: z.object({
        verificationRecordId: z.string(),
        registrationOptions: z.looseObject({ challenge: z.string() }),
        expiresAt: z.string(),
      }),
      errors: [400, 401],
    },
    async (_input, ctx) => {
      const { user, center } = await accountSession(ctx, db, oidc);
      assertFieldEditable(center, 'mfa');
      const passkeys = (await listFactors(db, user.id)).filter((factor) => factor.type === 'WebAuthn');
      const name = user.username ?? user.primary_email ?? user.primary_phone ?? user.id;
      const options = await registrationOptions(rp, { id: user.id, name, displayName: user.name ?? name }, passkeys);
      const record = await createVerification(db, user.id, {
        type: 'WebAuthn',
        webAuthn: { challenge: options.challenge },
        verified: false,
      });
      return {
        verificationRecordId: record.id,
        registrationOptions: { ...options },
        expiresAt: new Date(record.expiresAt).toISOString(),
      };
    },
  );

  api.add(
    {
      method: 'post',
      path: '/verifications/web-authn/registration/verify',
      summary:
        "Verify the authenticator's answer to a passkey registration (bound with POST /my-account/mfa-verifications)",
      tag,
      body: z.strictObject({ verificationRecordId: z.string().min(1).max(64), payload: webAuthnRegistrationPayload }),
      response: z.object({ verificationRecordId: z.string() }),
      errors: [400, 401, 404, 422],
    },
    async ({ body }, ctx) => {
      const { user, center } = await accountSession(ctx, db, oidc);
      assertFieldEditable(center, 'mfa');
      const record = await getVerification(db, user.id, body.verificationRecordId);
      if (record.type !== 'WebAuthn' || !record.webAuthn) {
        throw new RequestError('verification_record.not_found');
      }
      const passkey = await verifyRegistration(rp, record.webAuthn.challenge, body.payload);
      if (!passkey) {
        throw new RequestError('session.mfa.webauthn_verification_failed');
      }
      if (await findWebAuthnFactor(db, passkey.credentialId)) {
        throw new RequestError('user.webauthn_already_in_use');
      }
      await markVerified(db, record.id, { ...record.webAuthn, passkey });
      return { verificationRecordId: record.id };
    },
  );

  api.add(
    {
      method: 'get',
      path: '/my-account/mfa-verifications',
      summary: 'My second factors',
      tag,
      response: z.array(mfaVerificationSchema),
      errors: [400, 401],
    },
    async (_input, ctx) => {
      const { user, center } = await accountSession(ctx, db, oidc);
      assertFieldShown(center, 'mfa');
      return (await listFactors(db, user.id)).map(toMfaVerification);
    },
  );

  api.add(
    {
      method: 'post',
      path: '/my-account/mfa-verifications/totp-secret/generate',
      summary: 'A new authenticator secret and its QR code (bound with a code from the app)',
      tag,
      response: z.object({ secret: z.string(), secretQrCode: z.string() }),
      errors: [400, 401],
    },
    async (_input, ctx) => {
      const { user, center } = await accountSession(ctx, db, oidc);
      assertFieldEditable(center, 'mfa');
      const { secret, secretQrCode } = await totpEnrolment(
        newTotpSecret(),
        new URL(config.endpoint).host,
        user.username ?? user.primary_email ?? user.primary_phone ?? user.id,
      );
      return { secret, secretQrCode };
    },
  );

  api.add(
    {
      method: 'post',
      path: '/my-account/mfa-verifications/backup-codes/generate',
      summary: 'New backup codes, to bind (they are shown only now)',
      tag,
      response: z.object({ codes: z.array(z.string()) }),
      errors: [400, 401],
    },
    async (_input, ctx) => {
      await accountSession(ctx, db, oidc);
      return { codes: newBackupCodes() };
    },
  );

  api.add(
    {
      method: 'post',
      path: '/my-account/mfa-verifications',
      summary:
        'Bind an authenticator (its secret, and a current code to check it), a registered passkey, or backup codes (replacing any older set)',
      tag,
      body: z.discriminatedUnion('type', [
        z.strictObject({
          type: z.literal('WebAuthn'),
          newIdentifierVerificationRecordId: z.string().min(1).max(64),
          name: z.string().min(1).max(128).optional(),
        }),
        z.strictObject({
          type: z.literal('Totp'),
          secret: z.string().max(128).refine(isTotpSecret, 'must be a base32 secret'),
          /** A current code, checked when given; Logto binds the secret alone (its page checks a code first). */
          code: z.string().min(1).max(16).optional(),
        }),
        z.strictObject({
          type: z.literal('BackupCode'),
          codes: z
            .array(
              z
                .string()
                .max(10)
                .regex(/^[0-9a-f]{10}$/),
            )
            .length(10),
        }),
      ]),
      errors: [400, 401, 422],
    },
    async ({ body }, ctx) => {
      const { user, center } = await accountSession(ctx, db, oidc);
      assertFieldEditable(center, 'mfa');
      await requireIdentityProof(db, user, proofHeader(ctx));
      let factor: Parameters<typeof addFactor>[2];
      const consumed: string[] = [];
      if (body.type === 'WebAuthn') {
        const registration = await getVerification(db, user.id, body.newIdentifierVerificationRecordId);
        const passkey = registration.type === 'WebAuthn' ? registration.webAuthn?.passkey : undefined;
        if (!passkey || !registration.verified) {
          throw new RequestError('verification_record.not_found');
        }
        factor = { type: 'WebAuthn', passkey, name: body.name };
        consumed.push(registration.id);
      } else if (body.type === 'Totp') {
        const step = body.code === undefined ? undefined : acceptedStep(body.secret, body.code.trim(), null);
        if (body.code !== undefined && step === undefined) {
          throw new RequestError('session.mfa.invalid_totp_code');
        }
        factor = { type: 'Totp', secret: body.secret, lastUsedStep: step };
      } else {
        await assertBackupCodesNotAlone(db, user.id);
        factor = { type: 'BackupCode', codes: storedBackupCodes(body.codes) };
      }
      await withTransaction(db, async (trx) => {
        // A new set of backup codes replaces the old one; a second authenticator is refused (PUT …/totp replaces).
        await addFactor(trx, user.id, factor, { replace: factor.type === 'BackupCode' });
        await consumeVerifications(trx, consumed);
        await recordUserDataEvent(trx, cache, ctx, 'User.Data.Updated', user.id);
      });
    },
  );

  api.add(
    {
      method: 'put',
      path: '/my-account/mfa-verifications/totp',
      summary:
        'Bind an authenticator, replacing the one I have (its secret and a current code; header logto-verification-id)',
      tag,
      body: z.strictObject({
        secret: z.string().max(128).refine(isTotpSecret, 'must be a base32 secret'),
        code: z.string().min(1).max(16),
      }),
      errors: [400, 401],
    },
    async ({ body }, ctx) => {
      const { user, center } = await accountSession(ctx, db, oidc);
      assertFieldEditable(center, 'mfa');
      await requireIdentityProof(db, user, proofHeader(ctx));
      const step = acceptedStep(body.secret, body.code.trim(), null);
      if (step === undefined) {
        throw new RequestError('session.mfa.invalid_totp_code');
      }
      await withTransaction(db, async (trx) => {
        await addFactor(trx, user.id, { type: 'Totp', secret: body.secret, lastUsedStep: step }, { replace: true });
        await recordUserDataEvent(trx, cache, ctx, 'User.Data.Updated', user.id);
      });
    },
  );

  api.add(
    {
      method: 'delete',
      path: '/my-account/mfa-verifications/:verificationId',
      summary: 'Remove one of my second factors',
      tag,
      params: z.object({ verificationId: entityId }),
      errors: [400, 401, 404],
    },
    async ({ params }, ctx) => {
      const { user, center } = await accountSession(ctx, db, oidc);
      assertFieldEditable(center, 'mfa');
      await requireIdentityProof(db, user, proofHeader(ctx));
      await withTransaction(db, async (trx) => {
        await deleteFactor(trx, user.id, params.verificationId);
        await recordUserDataEvent(trx, cache, ctx, 'User.Data.Updated', user.id);
      });
    },
  );
}
