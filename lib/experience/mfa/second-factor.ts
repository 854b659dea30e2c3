import type { Knex } from 'knex';

import type { ErrorCode } from '../../http/error-codes.ts';
import { RequestError } from '../../http/errors.ts';
import type { CodeIdentifier } from '../../messages/codes.ts';
import { useBackupCode } from '../../mfa/backup-codes.ts';
import { recordFactorUse } from '../../mfa/factors.ts';
import { codesOf, type FactorType, findFactor, findWebAuthnFactor } from '../../mfa/queries.ts';
import { acceptedStep } from '../../mfa/totp.ts';
import { type RelyingParty, verifyAuthentication, type WebAuthnAuthenticationPayload } from '../../mfa/webauthn.ts';
import type { SharedCache } from '../../storage/shared-cache.ts';
import { recordExceptionEvent } from '../events.ts';
import { isCodeRefusal } from '../guarded-checks.ts';
import {
  assertNotLocked,
  failVerification,
  mfaTarget,
  recordSuccess,
  type SentinelPolicy,
} from '../lockout/lockout.ts';
import { verifyVerificationCode } from '../verification/verification-codes.ts';

type CodeFactor = Exclude<FactorType, 'WebAuthn'>;

const invalidCode = {
  Totp: 'session.mfa.invalid_totp_code',
  BackupCode: 'session.mfa.invalid_backup_code',
} as const satisfies Record<CodeFactor, ErrorCode>;

/** Proves the user's own TOTP or backup code; a code is accepted once (a backup code is then used up). */
export async function verifySecondFactor(
  db: Knex,
  cache: SharedCache,
  policy: SentinelPolicy,
  userId: string,
  proof: { type: CodeFactor; code: string },
): Promise<void> {
  const target = mfaTarget(userId);
  await assertNotLocked(db, target);
  const factor = await findFactor(db, userId, proof.type);
  // An account without the factor gets the answer of a wrong code (Logto's), and the try counts.
  let accepted = false;
  if (factor?.type === 'Totp') {
    if (factor.secret === null) {
      throw new Error(`TOTP factor ${factor.id} has no secret`);
    }
    const step = acceptedStep(factor.secret, proof.code.trim(), factor.last_used_step);
    accepted = step !== undefined && (await recordFactorUse(db, factor, { lastUsedStep: step }));
  } else if (factor) {
    const codes = useBackupCode(codesOf(factor), proof.code);
    accepted = codes !== undefined && (await recordFactorUse(db, factor, { codes }));
  }
  if (!accepted) {
    return failVerification(db, target, policy, new RequestError(invalidCode[proof.type]), () =>
      recordExceptionEvent(db, cache, 'Identifier.Lockout', { type: 'userId', value: userId }),
    );
  }
  await recordSuccess(db, target);
}

/**
 * Checks a code sent to the user's own email or phone as their second factor: failures count
 * against the second factor like wrong TOTP codes, not against the address as a sign-in identifier.
 */
export async function verifySecondFactorCode(
  db: Knex,
  cache: SharedCache,
  policy: SentinelPolicy,
  userId: string,
  check: { codeId: string; identifier: CodeIdentifier; code: string },
): Promise<void> {
  const target = mfaTarget(userId);
  await assertNotLocked(db, target);
  try {
    await verifyVerificationCode(db, { ...check, purpose: 'MfaVerification' });
  } catch (error) {
    if (isCodeRefusal(error)) {
      return failVerification(db, target, policy, error, () =>
        recordExceptionEvent(db, cache, 'Identifier.Lockout', { type: 'userId', value: userId }),
      );
    }
    throw error;
  }
  await recordSuccess(db, target);
}

/**
 * Proves one of the user's passkeys: the assertion answers `challenge`, is signed with that
 * passkey's key, and its signature counter moved on (a cloned authenticator is refused). Failures
 * count against the second factor like wrong TOTP codes. A passkey that is the only proof of a
 * sign-in must have verified its user (`requireUserVerification`: PIN or biometrics).
 */
export async function verifySecondFactorPasskey(
  db: Knex,
  cache: SharedCache,
  policy: SentinelPolicy,
  userId: string,
  ceremony: {
    rp: RelyingParty;
    challenge: string;
    payload: WebAuthnAuthenticationPayload;
    requireUserVerification?: boolean;
  },
): Promise<void> {
  const target = mfaTarget(userId);
  await assertNotLocked(db, target);
  const factor = await findWebAuthnFactor(db, ceremony.payload.id);
  const counter =
    factor?.user_id === userId
      ? await verifyAuthentication(ceremony.rp, ceremony.challenge, ceremony.payload, factor, ceremony)
      : undefined;
  const accepted = factor !== undefined && counter !== undefined && (await recordFactorUse(db, factor, { counter }));
  if (!accepted) {
    return failVerification(db, target, policy, new RequestError('session.mfa.webauthn_verification_failed'), () =>
      recordExceptionEvent(db, cache, 'Identifier.Lockout', { type: 'userId', value: userId }),
    );
  }
  await recordSuccess(db, target);
}
