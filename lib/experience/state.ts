import { z } from 'zod';

import type { ExternalAuthorization, ExternalUserInfo } from '../connectors/external-idp.ts';
import { RequestError } from '../http/errors.ts';
import type { MfaProgress } from '../mfa/sign-in-requirement.ts';
import type { Queryable } from '../storage/database.ts';

export const interactionEvents = ['SignIn', 'Register', 'ForgotPassword'] as const;
export type InteractionEvent = (typeof interactionEvents)[number];

export const identifierSchema = z.strictObject({
  type: z.enum(['username', 'email', 'phone']),
  value: z.string().min(1).max(128),
});
export type Identifier = z.output<typeof identifierSchema>;

/** What one step proved, kept until the interaction is submitted. */
export type VerificationRecord =
  | { id: string; type: 'Password'; identifier: Identifier; userId: string; verified: true }
  | { id: string; type: 'NewPasswordIdentity'; identifier: Identifier; passwordDigest: string; verified: true }
  | {
      id: string;
      type: 'EmailVerificationCode' | 'PhoneVerificationCode';
      identifier: Identifier;
      codeId: string;
      verified: boolean;
    }
  /** A second factor: `secret` (or `codes`) when it is a new one being enrolled, not a proof of an existing one. */
  | { id: string; type: 'Totp'; userId: string; secret?: string; step?: number; verified: boolean }
  | { id: string; type: 'BackupCode'; userId: string; codes?: string[]; verified: boolean }
  | {
      id: string;
      type: 'Social' | 'EnterpriseSso';
      connectorId: string;
      authorization: ExternalAuthorization;
      userInfo?: ExternalUserInfo;
      /** EnterpriseSso: the IdP's issuer, the namespace of `userInfo.id`. */
      issuer?: string;
      verified: boolean;
    };

/** The profile a registration (or a sign-in that must complete it) is building. */
export type PendingProfile = {
  username?: string;
  primaryEmail?: string;
  primaryPhone?: string;
  passwordDigest?: string;
  /** A verified social identity to link at submit (POST /experience/profile {type:'social'}). */
  socialVerificationId?: string;
};

export type ExperienceState = {
  interactionEvent: InteractionEvent;
  records: Record<string, VerificationRecord>;
  /** The user identified (or created) by `identification`. */
  userId?: string;
  profile: PendingProfile;
  /** ForgotPassword: the new password, applied at submit. */
  newPasswordDigest?: string;
  mfa?: MfaProgress;
};

export const newState = (interactionEvent: InteractionEvent): ExperienceState => ({
  interactionEvent,
  records: {},
  profile: {},
});

export async function loadState(db: Queryable, interactionUid: string): Promise<ExperienceState> {
  const row = await db('experience_states')
    .where({ interaction_uid: interactionUid })
    .where('expires_at', '>', Date.now())
    .first<{ state: string } | undefined>();
  if (!row) {
    throw new RequestError('session.interaction_not_found');
  }
  return JSON.parse(row.state) as ExperienceState;
}

/** Lives as long as the provider's interaction it belongs to. */
export async function saveState(
  db: Queryable,
  interactionUid: string,
  state: ExperienceState,
  expiresAt: number,
): Promise<void> {
  await db('experience_states')
    .insert({ interaction_uid: interactionUid, state: JSON.stringify(state), expires_at: expiresAt })
    .onConflict('interaction_uid')
    .merge();
}

export async function deleteState(db: Queryable, interactionUid: string): Promise<void> {
  await db('experience_states').where({ interaction_uid: interactionUid }).delete();
}

export async function purgeExpiredStates(db: Queryable): Promise<number> {
  return db('experience_states').where('expires_at', '<=', Date.now()).delete();
}

export function getRecord(state: ExperienceState, verificationId: string | undefined): VerificationRecord {
  const record =
    verificationId && Object.hasOwn(state.records, verificationId) ? state.records[verificationId] : undefined;
  if (!record) {
    throw new RequestError('session.verification_session_not_found');
  }
  return record;
}

export function requireVerified(record: VerificationRecord): VerificationRecord {
  if (!record.verified) {
    throw new RequestError('session.verification_failed');
  }
  return record;
}
