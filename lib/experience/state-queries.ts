import { z } from 'zod';

import { externalAuthorizationSchema, externalUserInfoSchema } from '../connectors/external-idp.ts';
import { mfaProgressSchema } from '../mfa/sign-in-requirement.ts';
import { newPasskeySchema } from '../mfa/webauthn.ts';
import type { Queryable } from '../storage/database.ts';
import { jsonColumn } from '../storage/json-column.ts';
import { openSecret, type SealedColumn, sealSecret } from '../storage/sealed-columns.ts';

/*
 * `experience_states`: an interaction's progress through the Experience API, one JSON document per
 * oidc-provider interaction. Its schema is the state's type; only this service writes it.
 */

export const interactionEvents = ['SignIn', 'Register', 'ForgotPassword'] as const;
export type InteractionEvent = (typeof interactionEvents)[number];

/** A request's identifier; stored ones were checked by it when they came in. */
export const identifierSchema = z.strictObject({
  type: z.enum(['username', 'email', 'phone']),
  value: z.string().min(1).max(128),
});
export type Identifier = z.output<typeof identifierSchema>;

const storedIdentifier = z.object({ type: identifierSchema.shape.type, value: z.string() });

/** What one step proved, kept until the interaction is submitted. */
const verificationRecordSchema = z.union([
  z.object({
    id: z.string(),
    type: z.literal('Password'),
    identifier: storedIdentifier,
    userId: z.string(),
    verified: z.literal(true),
  }),
  z.object({
    id: z.string(),
    type: z.literal('NewPasswordIdentity'),
    identifier: storedIdentifier,
    passwordDigest: z.string(),
    verified: z.literal(true),
  }),
  z.object({
    id: z.string(),
    type: z.enum(['EmailVerificationCode', 'PhoneVerificationCode']),
    identifier: storedIdentifier,
    codeId: z.string(),
    verified: z.boolean(),
  }),
  /** A code sent to the identified user's own email or phone as a second factor: it proves no identifier. */
  z.object({
    id: z.string(),
    type: z.enum(['MfaEmailVerificationCode', 'MfaPhoneVerificationCode']),
    userId: z.string(),
    identifier: storedIdentifier,
    codeId: z.string(),
    verified: z.boolean(),
  }),
  /** A second factor: `secret` (or `codes`) when it is a new one being enrolled, not a proof of an existing one. */
  z.object({
    id: z.string(),
    type: z.literal('Totp'),
    userId: z.string(),
    secret: z.string().optional(),
    step: z.number().optional(),
    verified: z.boolean(),
  }),
  z.object({
    id: z.string(),
    type: z.literal('BackupCode'),
    userId: z.string(),
    codes: z.array(z.string()).optional(),
    verified: z.boolean(),
  }),
  /**
   * A passkey ceremony: the challenge the options carried; `passkey` once a registration verified
   * (bound at submit with POST /experience/profile/mfa).
   */
  z.object({
    id: z.string(),
    type: z.literal('WebAuthn'),
    userId: z.string(),
    ceremony: z.enum(['registration', 'authentication']),
    challenge: z.string(),
    passkey: newPasskeySchema.optional(),
    verified: z.boolean(),
  }),
  /**
   * A passkey as the way in (Logto's `SignInPasskey`): `named` when an identifier came first, with
   * `userId` the account it names (none: no such account); once verified, `userId` is the account
   * the passkey belongs to.
   */
  z.object({
    id: z.string(),
    type: z.literal('SignInPasskey'),
    named: z.boolean(),
    userId: z.string().optional(),
    challenge: z.string(),
    verified: z.boolean(),
  }),
  /**
   * A one-time token (a magic link, an invitation) spent: it proves the email, as a code would, and
   * names the organizations the person joins once identified.
   */
  z.object({
    id: z.string(),
    type: z.literal('OneTimeToken'),
    identifier: storedIdentifier,
    jitOrganizationIds: z.array(z.string()),
    verified: z.literal(true),
  }),
  z.object({
    id: z.string(),
    type: z.enum(['Social', 'EnterpriseSso']),
    connectorId: z.string(),
    authorization: externalAuthorizationSchema,
    userInfo: externalUserInfoSchema.optional(),
    /** EnterpriseSso: the IdP's issuer, the namespace of `userInfo.id`. */
    issuer: z.string().optional(),
    verified: z.boolean(),
  }),
]);
export type VerificationRecord = z.output<typeof verificationRecordSchema>;

/** The profile a registration (or a sign-in that must complete it) is building. */
const pendingProfileSchema = z.object({
  username: z.string().optional(),
  primaryEmail: z.string().optional(),
  primaryPhone: z.string().optional(),
  passwordDigest: z.string().optional(),
  /** A verified social identity to link at submit (POST /experience/profile {type:'social'}). */
  socialVerificationId: z.string().optional(),
});
export type PendingProfile = z.output<typeof pendingProfileSchema>;

const experienceStateSchema = z.object({
  interactionEvent: z.enum(interactionEvents),
  records: z.record(z.string(), verificationRecordSchema),
  /** The user identified (or created) by `identification`. */
  userId: z.string().optional(),
  profile: pendingProfileSchema,
  /** ForgotPassword: the new password, applied at submit. */
  newPasswordDigest: z.string().optional(),
  mfa: mfaProgressSchema.optional(),
  /**
   * The challenge of a discoverable passkey ceremony started before anyone is named (Logto's
   * preflight): the page's "sign in with a passkey" button or the browser's autofill. Used once.
   */
  signInPasskey: z.object({ challenge: z.string() }).optional(),
  /** The captcha provider accepted the token `PUT /experience` carried (captcha.ts). */
  captchaVerified: z.literal(true).optional(),
});
export type ExperienceState = z.output<typeof experienceStateSchema>;

const stateOf = jsonColumn('experience_states', 'state', experienceStateSchema);

/**
 * A second factor being enrolled (a TOTP secret, backup codes not yet shown twice) is a secret like
 * the user's enrolled ones: sealed with SECRETS_ENCRYPTION_KEY, bound to the interaction and the
 * record. `rotate-secrets` does not rewrite these: they live an hour at most, and one sealed with a
 * retired key fails to open, so that person starts the enrolment again.
 */
const pendingFactors: SealedColumn = { table: 'experience_states', column: 'state', field: 'records' };

function withPendingFactors(
  state: ExperienceState,
  transform: (value: string, recordId: string) => string,
): ExperienceState {
  const records = Object.fromEntries(
    Object.entries(state.records).map(([id, record]): [string, VerificationRecord] => {
      if (record.type === 'Totp' && record.secret !== undefined) {
        return [id, { ...record, secret: transform(record.secret, id) }];
      }
      if (record.type === 'BackupCode' && record.codes !== undefined) {
        return [id, { ...record, codes: record.codes.map((code) => transform(code, id)) }];
      }
      return [id, record];
    }),
  );
  return { ...state, records };
}

/** The interaction's state, unless it has none or it expired. */
export async function findState(db: Queryable, interactionUid: string): Promise<ExperienceState | undefined> {
  const row = await db('experience_states')
    .where({ interaction_uid: interactionUid })
    .where('expires_at', '>', Date.now())
    .first<{ state: string } | undefined>();
  return (
    row &&
    withPendingFactors(stateOf(row.state), (stored, recordId) =>
      openSecret(db, pendingFactors, `${interactionUid}.${recordId}`, stored),
    )
  );
}

/** Lives as long as the provider's interaction it belongs to. */
export async function saveState(
  db: Queryable,
  interactionUid: string,
  state: ExperienceState,
  expiresAt: number,
): Promise<void> {
  await db('experience_states')
    .insert({
      interaction_uid: interactionUid,
      state: JSON.stringify(
        withPendingFactors(state, (value, recordId) =>
          sealSecret(db, pendingFactors, `${interactionUid}.${recordId}`, value),
        ),
      ),
      expires_at: expiresAt,
    })
    .onConflict('interaction_uid')
    .merge();
}

export async function deleteState(db: Queryable, interactionUid: string): Promise<void> {
  await db('experience_states').where({ interaction_uid: interactionUid }).delete();
}

export async function purgeExpiredStates(db: Queryable): Promise<number> {
  return db('experience_states').where('expires_at', '<=', Date.now()).delete();
}
