import { RequestError } from '../../http/errors.ts';
import { codeFactorsOf } from '../../mfa/code-factors.ts';
import { findFactor } from '../../mfa/queries.ts';
import { accountFactors, enabledFactors, type MfaFactor, type MfaProgress } from '../../mfa/sign-in-requirement.ts';
import type { SignInExperience } from '../../sign-in-experience/schemas.ts';
import type { Queryable } from '../../storage/database.ts';
import type { SharedCache } from '../../storage/shared-cache.ts';
import type { UserRow } from '../../users/queries.ts';
import { addressFromRecord } from '../sign-in-profile.ts';
import { getRecord, requireVerified } from '../state.ts';
import type { ExperienceState, VerificationRecord } from '../state-queries.ts';

/** The record each factor is bound from: an enrolment, or a code that verified a new email or phone. */
const recordTypeOf = {
  Totp: 'Totp',
  WebAuthn: 'WebAuthn',
  BackupCode: 'BackupCode',
  EmailVerificationCode: 'EmailVerificationCode',
  PhoneVerificationCode: 'PhoneVerificationCode',
} as const satisfies Record<MfaFactor, VerificationRecord['type']>;

type RecordOf<F extends MfaFactor> = Extract<VerificationRecord, { type: (typeof recordTypeOf)[F] }>;

/** The record `verificationId` when it is `factor`'s (and, for an enrolment, the user's); else 404 as in Logto. */
function recordFor<F extends MfaFactor>(state: ExperienceState, factor: F, verificationId: string, userId: string) {
  const record = getRecord(state, verificationId);
  if (record.type !== recordTypeOf[factor] || ('userId' in record && record.userId !== userId)) {
    throw new RequestError('session.verification_session_not_found');
  }
  return record as RecordOf<F>;
}

const notCompleted = (factor: MfaFactor) =>
  new RequestError('session.verification_failed', {
    reason: `This verification is not a completed ${factor} enrolment.`,
  });

/**
 * `POST /experience/profile/mfa`: what binding `factor` from record `verificationId` adds to the
 * interaction (applied at submit), with Logto's checks in its order: the record (404), that it was
 * completed (400), that the factor is enabled (400; a passkey also while passkey sign-in is on),
 * then the factor's own rule: one authenticator app per account (422), backup codes beside another
 * factor only (422), an email or phone free and allowed like any added to the profile. An email or
 * phone code is proof of the second factor as well. TOTP secrets and backup codes are made whether
 * or not the factor is enabled: it is checked here.
 */
export async function bindFactor(
  db: Queryable,
  cache: SharedCache,
  settings: SignInExperience,
  state: ExperienceState,
  user: UserRow,
  { type, verificationId }: { type: MfaFactor; verificationId: string },
): Promise<ExperienceState> {
  const mfa: MfaProgress = { ...state.mfa, enabled: true };
  const enabled = enabledFactors(settings);
  const assertEnabled = () => {
    if (!enabled.includes(type) && !(type === 'WebAuthn' && settings.passkeySignIn.enabled)) {
      throw new RequestError('session.mfa.mfa_factor_not_enabled', {
        reason: `${type} is not enabled in the sign-in experience.`,
      });
    }
  };
  switch (type) {
    case 'Totp': {
      const record = recordFor(state, type, verificationId, user.id);
      if (!record.secret || record.step === undefined || !record.verified) {
        throw notCompleted(type);
      }
      assertEnabled();
      if (await findFactor(db, user.id, 'Totp')) {
        throw new RequestError('user.totp_already_in_use');
      }
      return { ...state, mfa: { ...mfa, totp: { secret: record.secret, step: record.step } } };
    }
    case 'WebAuthn': {
      const { passkey, verified } = recordFor(state, type, verificationId, user.id);
      if (!passkey || !verified) {
        throw notCompleted(type);
      }
      assertEnabled();
      const others = (mfa.webAuthn ?? []).filter((bound) => bound.credentialId !== passkey.credentialId);
      return { ...state, mfa: { ...mfa, webAuthn: [...others, passkey] } };
    }
    case 'BackupCode': {
      const { codes } = recordFor(state, type, verificationId, user.id);
      if (!codes) {
        throw notCompleted(type);
      }
      assertEnabled();
      const others = [
        ...(await accountFactors(db, settings, user)),
        ...(mfa.totp ? ['Totp'] : []),
        ...(mfa.webAuthn?.length ? ['WebAuthn'] : []),
        ...codeFactorsOf(enabled, state.profile),
      ].filter((factor) => factor !== 'BackupCode');
      if (others.length === 0) {
        throw new RequestError('session.mfa.backup_code_can_not_be_alone');
      }
      return { ...state, mfa: { ...mfa, backupCodes: codes } };
    }
    case 'EmailVerificationCode':
    case 'PhoneVerificationCode': {
      requireVerified(recordFor(state, type, verificationId, user.id));
      assertEnabled();
      const addition = await addressFromRecord(db, cache, settings, state, verificationId, user);
      return { ...state, profile: { ...state.profile, ...addition }, mfa: { ...mfa, verified: true } };
    }
  }
}
