import { z } from 'zod';

import type { Api } from '../../http/api/route.ts';
import type { CodeIdentifier } from '../../messages/codes.ts';
import { email, phone } from '../../users/schemas.ts';
import type { ExperienceContext } from '../context.ts';
import { sendVerificationCode, verifyVerificationCode } from './verification-codes.ts';

const tag = 'Verification codes';
const verificationCode = z.string().min(1).max(32);

const sendBody = z.union([z.strictObject({ email }), z.strictObject({ phone })]);
const verifyBody = z.union([z.strictObject({ email, verificationCode }), z.strictObject({ phone, verificationCode })]);

const identifierOf = (body: { email: string } | { phone: string }): CodeIdentifier =>
  'email' in body ? { type: 'email', value: body.email } : { type: 'phone', value: body.phone };

/**
 * Logto's management endpoints for codes outside a sign-in: a Generic code, checked later by
 * recipient alone (the newest unused Generic code). Rate limited like any send, but a refusal
 * here is an admin's call and emits no `Message.RateLimited`.
 */
export function verificationCodeRoutes(api: Api, { messages: connectors }: ExperienceContext): void {
  api.add(
    {
      method: 'post',
      path: '/verification-codes',
      summary: 'Send a verification code to an email address or phone number',
      tag,
      body: sendBody,
      errors: [429, 502],
      // It sends a message: no transaction waits on the mail server.
      transaction: false,
    },
    async ({ body }, _ctx, db) => {
      await sendVerificationCode(db, connectors, { identifier: identifierOf(body), purpose: 'Generic' });
    },
  );

  api.add(
    {
      method: 'post',
      path: '/verification-codes/verify',
      summary: 'Verify a code sent with POST /verification-codes',
      tag,
      body: verifyBody,
      // A wrong code counts as an attempt even though the request fails.
      transaction: false,
    },
    async ({ body }, _ctx, db) => {
      await verifyVerificationCode(db, {
        identifier: identifierOf(body),
        code: body.verificationCode,
        purpose: 'Generic',
      });
    },
  );
}
