import { z } from 'zod';

import type { Api } from '../http/api/route.ts';
import type { ServiceContext } from '../http/context.ts';
import { RequestError } from '../http/errors.ts';
import { entityId, userParams } from '../shared/entity-id.ts';
import { getUserRow, getUserRowForUpdate } from '../users/users.ts';
import { isBackupCodeSet, newBackupCodes, storedBackupCodes } from './backup-codes.ts';
import {
  addFactor,
  assertBackupCodesNotAlone,
  deleteFactor,
  mfaVerificationSchema,
  toMfaVerification,
} from './factors.ts';
import { listFactors } from './queries.ts';
import { isTotpSecret, newTotpSecret, totpEnrolment } from './totp.ts';

const tag = 'User MFA';

/**
 * Admins see a user's second factors and remove one (a lost phone), and, as in Logto, create an
 * authenticator secret or backup codes for a user (moving users in with their factors, or setting
 * up an account for someone): the secret or codes are answered once, for the administrator to hand over.
 */
export function userMfaRoutes(api: Api, { db, config }: ServiceContext): void {
  api.add(
    {
      method: 'get',
      path: '/users/:userId/mfa-verifications',
      summary: "List a user's MFA factors (never their secrets)",
      tag,
      params: userParams,
      response: z.array(mfaVerificationSchema),
      errors: [404],
    },
    async ({ params }) => {
      await getUserRow(db, params.userId);
      return (await listFactors(db, params.userId)).map(toMfaVerification);
    },
  );

  api.add(
    {
      method: 'post',
      path: '/users/:userId/mfa-verifications',
      summary: "Create a user's authenticator (TOTP) secret or backup codes, generated or given",
      tag,
      params: userParams,
      body: z.discriminatedUnion('type', [
        z.strictObject({ type: z.literal('Totp'), secret: z.string().max(128).optional() }),
        z.strictObject({ type: z.literal('BackupCode'), codes: z.array(z.string().max(64)).max(64).optional() }),
      ]),
      response: z.union([
        z.object({ type: z.literal('Totp'), secret: z.string(), secretQrCode: z.string() }),
        z.object({ type: z.literal('BackupCode'), codes: z.array(z.string()) }),
      ]),
      errors: [404, 422],
    },
    async ({ params, body }, _ctx, trx) => {
      const user = await getUserRowForUpdate(trx, params.userId);
      if (body.type === 'Totp') {
        if (body.secret !== undefined && !isTotpSecret(body.secret)) {
          throw new RequestError('user.totp_secret_invalid');
        }
        const secret = body.secret ?? newTotpSecret();
        await addFactor(trx, user.id, { type: 'Totp', secret });
        const name = user.username ?? user.primary_email ?? user.primary_phone ?? user.name ?? 'Unnamed User';
        const { secretQrCode } = await totpEnrolment(secret, new URL(config.endpoint).host, name);
        return { type: 'Totp' as const, secret, secretQrCode };
      }
      await assertBackupCodesNotAlone(trx, user.id);
      if (body.codes !== undefined && !isBackupCodeSet(body.codes)) {
        throw new RequestError('user.wrong_backup_code_format');
      }
      const codes = body.codes ?? newBackupCodes();
      await addFactor(trx, user.id, { type: 'BackupCode', codes: storedBackupCodes(codes) });
      return { type: 'BackupCode' as const, codes };
    },
  );

  api.add(
    {
      method: 'delete',
      path: '/users/:userId/mfa-verifications/:verificationId',
      summary: "Remove one of a user's MFA factors",
      tag,
      params: userParams.extend({ verificationId: entityId }),
      errors: [404],
    },
    async ({ params }, _ctx, trx) => {
      await getUserRowForUpdate(trx, params.userId);
      await deleteFactor(trx, params.userId, params.verificationId);
    },
  );
}
