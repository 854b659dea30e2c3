import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import type { Context } from 'koa';
import type { Interaction } from 'oidc-provider';
import { z } from 'zod';

import type { AuditLog } from '../audit/audit-log.ts';
import { findConnector } from '../connectors/queries.ts';
import type { Api } from '../http/api/route.ts';
import { RequestError } from '../http/errors.ts';
import { signIns } from '../metrics/metrics.ts';
import { storedBackupCodes } from '../mfa/backup-codes.ts';
import { addFactor } from '../mfa/factors.ts';
import { mfaOwed } from '../mfa/sign-in-requirement.ts';
import { provisionByEmailDomain, provisionByOneTimeToken } from '../organizations/jit/jit-provisioning.ts';
import { isMemberOfMfaOrganization } from '../organizations/members/member-queries.ts';
import { assertPasswordAccepted } from '../sign-in-experience/password-policy.ts';
import { pwnedPasswordLookup } from '../sign-in-experience/pwned-passwords.ts';
import type { SignInExperience } from '../sign-in-experience/schemas.ts';
import { currentSignInExperience } from '../sign-in-experience/sign-in-experience.ts';
import type { SharedCache } from '../storage/shared-cache.ts';
import { withTransaction } from '../storage/transaction.ts';
import { linkSocialIdentity } from '../users/identities.ts';
import { hashPassword, verifyPassword } from '../users/passwords.ts';
import { updateUser } from '../users/queries.ts';
import { username } from '../users/schemas.ts';
import { assertIdentifiersFree, changeUser, getUserRow, userInfoOf } from '../users/users.ts';
import type { ExperienceContext } from './context.ts';
import { recordInteractionEvent, recordUserDataEvent } from './events.ts';
import { identifyExternal } from './external/external-identification.ts';
import { assertEmailForAccount, identifyUser, profileFromRecord, registerUser } from './identification.ts';
import { verifiedInteraction } from './mfa/mfa-steps.ts';
import {
  addressFromRecord,
  afterRegistration,
  applyProfile,
  assertNotInAccount,
  assertProfileFulfilled,
} from './sign-in-profile.ts';
import { getRecord, newState, requireVerified } from './state.ts';
import { deleteState, type ExperienceState, type InteractionEvent, interactionEvents } from './state-queries.ts';
import { finishSignIn } from './submit.ts';

const tag = 'Experience';
const eventBody = z.strictObject({ interactionEvent: z.enum(interactionEvents) });

/** `signInMode` closes sign-up or sign-in (Logto's rule: 403). */
function assertEventAllowed(event: InteractionEvent, settings: SignInExperience): void {
  if (
    (event === 'Register' && settings.signInMode === 'SignIn') ||
    (event === 'SignIn' && settings.signInMode === 'Register')
  ) {
    throw new RequestError('auth.forbidden', {
      reason: `${event === 'Register' ? 'Sign-up' : 'Sign-in'} is not enabled.`,
    });
  }
}

/**
 * The sign-in's id in webhook payloads and the audit log: a digest of the interaction's uid, stable
 * for one sign-in, never the uid itself (with the interaction cookie it resumes the sign-in).
 */
const sessionIdOf = (uid: string) => createHash('sha256').update(uid).digest('base64url').slice(0, 21);

const interactionDetails = (state: ExperienceState, interaction: Interaction, userId: string) => ({
  interactionEvent: state.interactionEvent,
  userId,
  applicationId: String(interaction.params.client_id),
  sessionId: sessionIdOf(interaction.uid),
});

/** The state with its user set; second-factor progress belongs to a user and does not carry over to another. */
const identified = (state: ExperienceState, userId: string): ExperienceState => ({
  ...state,
  userId,
  mfa: state.userId === userId ? state.mfa : undefined,
});

/** A finished interaction in the audit log, under Logto's keys (`Interaction.SignIn.Submit`, ...). */
const auditSubmit = (audit: AuditLog, ctx: Context, state: ExperienceState, interaction: Interaction, userId: string) =>
  audit.record(`Interaction.${state.interactionEvent}.Submit`, {
    result: 'Success',
    userId,
    applicationId: String(interaction.params.client_id),
    ip: ctx.ip,
    userAgent: ctx.get('user-agent'),
  });

/**
 * A sign-in through an outside IdP is not asked for the profile the sign-up settings require: the
 * IdP answers for the account (Logto exempts enterprise SSO; we exempt social sign-in too, as its
 * registration here creates the account without asking: docs/decisions.md).
 */
const provenByIdp = (state: ExperienceState) =>
  Object.values(state.records).some(
    (record) => (record.type === 'EnterpriseSso' || record.type === 'Social') && record.verified,
  );

function requireUser(state: ExperienceState): string {
  if (!state.userId) {
    throw new RequestError('session.identifier_not_found');
  }
  return state.userId;
}

/**
 * What the interaction bound to the account, applied as it finishes: an enrolled authenticator,
 * passkeys and backup codes, a declined MFA prompt, a social identity proven alongside. Says whether the user's
 * data changed (MFA or social linking: one `User.Data.Updated`).
 */
async function applyLinks(
  trx: Knex.Transaction,
  cache: SharedCache,
  state: ExperienceState,
  userId: string,
): Promise<boolean> {
  const { mfa = {}, profile } = state;
  if (mfa.totp) {
    await addFactor(trx, userId, { type: 'Totp', secret: mfa.totp.secret, lastUsedStep: mfa.totp.step });
  }
  if (mfa.backupCodes) {
    await addFactor(trx, userId, { type: 'BackupCode', codes: storedBackupCodes(mfa.backupCodes) });
  }
  for (const passkey of mfa.webAuthn ?? []) {
    await addFactor(trx, userId, { type: 'WebAuthn', passkey });
  }
  if (mfa.skipped) {
    await updateUser(trx, userId, { mfaSkipped: true });
  }
  const social = profile.socialVerificationId ? state.records[profile.socialVerificationId] : undefined;
  if (social?.type === 'Social' && social.userInfo) {
    const connector = await findConnector(trx, cache, social.connectorId);
    if (!connector) {
      throw new RequestError('entity.not_exists_with_id', { entity: 'connector', id: social.connectorId });
    }
    await linkSocialIdentity(trx, userId, connector.target, {
      userId: social.userInfo.id,
      details: { ...social.userInfo.rawData },
    });
  }
  return Boolean(mfa.totp ?? mfa.backupCodes ?? mfa.webAuthn?.length ?? social);
}

/** Sign-in, registration and password reset over one provider interaction (EXPERIENCE-API.md). */
export function experienceRoutes(
  api: Api<'own-transactions'>,
  { db, cache, sessions, oidc, audit, config, logger }: ExperienceContext,
): void {
  const isPwned = pwnedPasswordLookup(config.pwnedPasswordsUrl, logger);
  /** An invitation by magic link: the person joins its organizations once identified. */
  const joinInvitedOrganizations = async (userId: string, organizationIds: string[], ctx: Context) => {
    if (organizationIds.length > 0) {
      await withTransaction(db, (trx) => provisionByOneTimeToken(trx, cache, ctx, userId, organizationIds));
    }
  };
  api.add(
    {
      method: 'put',
      path: '/experience',
      summary: 'Start (or restart) an experience for the current interaction',
      tag,
      body: eventBody,
    },
    async ({ body }, ctx) => {
      const interaction = await sessions.interaction(ctx);
      assertEventAllowed(body.interactionEvent, await currentSignInExperience(db, cache));
      await sessions.saver(interaction)(newState(body.interactionEvent));
    },
  );

  api.add(
    {
      method: 'put',
      path: '/experience/interaction-event',
      summary: 'Switch between sign-in, registration and password reset',
      tag,
      body: eventBody,
      errors: [404],
    },
    async ({ body }, ctx) => {
      const session = await sessions.load(ctx);
      // What a password reset proved must not become a sign-in, nor the other way round.
      if ((session.state.interactionEvent === 'ForgotPassword') !== (body.interactionEvent === 'ForgotPassword')) {
        throw new RequestError(
          'session.not_supported_for_forgot_password',
          { reason: 'A password reset cannot switch to or from another flow.' },
          { status: 400 },
        );
      }
      assertEventAllowed(body.interactionEvent, await currentSignInExperience(db, cache));
      await session.save({ ...session.state, interactionEvent: body.interactionEvent });
    },
  );

  api.add(
    {
      method: 'get',
      path: '/experience/interaction',
      summary: 'What the current experience has proven so far (no secrets)',
      tag,
      response: z.object({
        interactionEvent: z.enum(interactionEvents),
        userId: z.string().optional(),
        profile: z.object({
          username: z.string().optional(),
          primaryEmail: z.string().optional(),
          primaryPhone: z.string().optional(),
          hasPassword: z.boolean(),
        }),
        verificationRecords: z.array(
          z.object({
            id: z.string(),
            type: z.string(),
            identifier: z.object({ type: z.string(), value: z.string() }).optional(),
            verified: z.boolean(),
          }),
        ),
      }),
      errors: [404],
    },
    async (_input, ctx) => {
      const { state } = await sessions.load(ctx);
      const { passwordDigest, ...profile } = state.profile;
      return {
        interactionEvent: state.interactionEvent,
        ...(state.userId && { userId: state.userId }),
        profile: { ...profile, hasPassword: Boolean(passwordDigest) },
        verificationRecords: Object.values(state.records).map((record) => ({
          id: record.id,
          type: record.type,
          ...('identifier' in record && { identifier: record.identifier }),
          verified: record.verified,
        })),
      };
    },
  );

  api.add(
    {
      method: 'post',
      path: '/experience/identification',
      summary: 'Identify the user (sign-in, reset) or create the account (registration: 201)',
      tag,
      body: z.strictObject({
        verificationId: z.string().min(1).max(64).optional(),
        linkSocialIdentity: z.boolean().optional(),
      }),
      errors: [401, 404, 422],
    },
    async ({ body }, ctx) => {
      const session = await sessions.load(ctx);
      const { state } = session;
      const settings = await currentSignInExperience(db, cache);
      const record = body.verificationId ? getRecord(state, body.verificationId) : undefined;
      if (record?.type === 'Social' || record?.type === 'EnterpriseSso') {
        requireVerified(record);
        const outcome = await withTransaction(db, (trx) =>
          identifyExternal(trx, cache, ctx, state, record, body.linkSocialIdentity ?? false),
        );
        // An IdP's new user registered; a known one signed in, whichever the page started with.
        await session.save({
          ...identified(state, outcome.userId),
          interactionEvent: outcome.created ? 'Register' : 'SignIn',
        });
        ctx.status = outcome.created ? 201 : 204;
        return;
      }
      if (state.interactionEvent !== 'Register') {
        const next = identified(state, await identifyUser(db, cache, state, body.verificationId, settings));
        if (record?.type === 'OneTimeToken' && next.userId) {
          await joinInvitedOrganizations(next.userId, record.jitOrganizationIds, ctx);
        }
        // A passkey that verified its user (PIN, biometrics) is both factors: no second one is asked (docs/decisions.md).
        await session.save(record?.type === 'SignInPasskey' ? { ...next, mfa: { ...next.mfa, verified: true } } : next);
        return;
      }
      const profile = body.verificationId
        ? { ...state.profile, ...profileFromRecord(state, body.verificationId) }
        : state.profile;
      await assertEmailForAccount(db, cache, settings, profile.primaryEmail);
      // An address already an account's answers first (Logto's): the page may switch to a sign-in
      // with the same verification, and nothing of it is kept in the profile.
      await assertIdentifiersFree(db, profile);
      // Kept before trying: after a 422 missing_profile, the next identification builds on it.
      await session.save({ ...state, profile });
      const userId = await withTransaction(db, async (trx) => {
        const created = await registerUser(trx, profile, settings);
        await recordUserDataEvent(trx, cache, ctx, 'User.Created', created);
        if (profile.primaryEmail) {
          await provisionByEmailDomain(trx, cache, ctx, created, profile.primaryEmail);
        }
        if (record?.type === 'OneTimeToken') {
          await provisionByOneTimeToken(trx, cache, ctx, created, record.jitOrganizationIds);
        }
        return created;
      });
      await session.save({ ...identified(state, userId), profile: afterRegistration(profile) });
      ctx.status = 201;
    },
  );

  api.add(
    {
      method: 'post',
      path: '/experience/profile',
      summary: 'Add a username, password, or verified email/phone to the profile being built',
      tag,
      body: z.discriminatedUnion('type', [
        z.strictObject({ type: z.literal('username'), value: username }),
        z.strictObject({ type: z.literal('password'), value: z.string().min(1).max(256) }),
        z.strictObject({ type: z.enum(['email', 'phone']), verificationId: z.string().min(1).max(64) }),
        z.strictObject({ type: z.literal('social'), verificationId: z.string().min(1).max(64) }),
      ]),
      errors: [404, 422],
    },
    async ({ body }, ctx) => {
      const session = await sessions.load(ctx);
      const { state } = session;
      if (state.interactionEvent === 'ForgotPassword') {
        throw new RequestError('session.not_supported_for_forgot_password', undefined, { status: 400 });
      }
      // A sign-in's profile is the identified account's, added once its second factor is proven
      // (Logto's order); a social identity may come first: submit still asks for the factor.
      if (state.interactionEvent === 'SignIn') {
        if (body.type === 'social') {
          requireUser(state);
        } else {
          await verifiedInteraction(db, cache, session);
        }
      }
      // An identified account keeps what it has: the profile only fills its gaps.
      const account = state.userId ? await getUserRow(db, state.userId) : undefined;
      let addition: ExperienceState['profile'];
      if (body.type === 'username') {
        assertNotInAccount(account, { username: body.value });
        await assertIdentifiersFree(db, { username: body.value });
        addition = { username: body.value };
      } else if (body.type === 'password') {
        const settings = await currentSignInExperience(db, cache);
        await assertPasswordAccepted(
          body.value,
          { policy: settings.passwordPolicy, isPwned },
          {
            ...(account && userInfoOf(account)),
            ...state.profile,
          },
        );
        addition = { passwordDigest: await hashPassword(body.value) };
        assertNotInAccount(account, addition);
      } else if (body.type === 'social') {
        // Linked at submit to whoever this interaction signs in (proved by password, code...).
        if (requireVerified(getRecord(state, body.verificationId)).type !== 'Social') {
          throw new RequestError('session.verification_failed', {
            reason: 'This verification is not a social sign-in.',
          });
        }
        addition = { socialVerificationId: body.verificationId };
      } else {
        const settings = await currentSignInExperience(db, cache);
        addition = await addressFromRecord(db, cache, settings, state, body.verificationId, account);
      }
      await session.save({ ...state, profile: { ...state.profile, ...addition } });
    },
  );

  api.add(
    {
      method: 'put',
      path: '/experience/profile/password',
      summary: 'Set the new password of a password reset',
      tag,
      body: z.strictObject({ password: z.string().min(1).max(256) }),
      errors: [404, 422],
    },
    async ({ body }, ctx) => {
      const session = await sessions.load(ctx);
      const { state } = session;
      if (state.interactionEvent !== 'ForgotPassword') {
        throw new RequestError('session.invalid_interaction_type', {
          reason: 'Only a password reset sets a new password here.',
        });
      }
      const user = await getUserRow(db, requireUser(state));
      if (await verifyPassword(user, body.password)) {
        throw new RequestError('user.same_password');
      }
      const settings = await currentSignInExperience(db, cache);
      await assertPasswordAccepted(body.password, { policy: settings.passwordPolicy, isPwned }, userInfoOf(user));
      await session.save({ ...state, newPasswordDigest: await hashPassword(body.password) });
    },
  );

  api.add(
    {
      method: 'post',
      path: '/experience/submit',
      summary: 'Finish: sign in (200 {redirectTo}) or, for a password reset, save the new password (204)',
      tag,
      response: z.object({ redirectTo: z.string() }).optional(),
      errors: [403, 404, 422],
    },
    async (_input, ctx) => {
      const session = await sessions.load(ctx);
      const { state, interaction } = session;
      const userId = requireUser(state);
      if (state.interactionEvent === 'ForgotPassword') {
        if (!state.newPasswordDigest) {
          throw new RequestError('user.new_password_required_in_profile');
        }
        const digest = state.newPasswordDigest;
        await withTransaction(db, async (trx) => {
          await changeUser(trx, userId, { passwordDigest: digest });
          await recordUserDataEvent(trx, cache, ctx, 'User.Data.Updated', userId);
          await recordInteractionEvent(
            trx,
            cache,
            ctx,
            'PostResetPassword',
            interactionDetails(state, interaction, userId),
          );
        });
        await deleteState(db, interaction.uid);
        auditSubmit(audit, ctx, state, interaction, userId);
        ctx.status = 204;
        return undefined;
      }
      const settings = await currentSignInExperience(db, cache);
      const user = await getUserRow(db, userId);
      const owed = await mfaOwed(
        db,
        settings,
        state.interactionEvent,
        user,
        () => isMemberOfMfaOrganization(db, userId),
        state.mfa,
        state.profile,
      );
      // Logto's order: prove the second factor, then complete the profile, then enrol a factor.
      if (owed?.code === 'session.mfa.require_mfa_verification') {
        throw owed;
      }
      if (!provenByIdp(state)) {
        assertProfileFulfilled(state.profile, settings, user);
      }
      if (owed) {
        throw owed;
      }
      await withTransaction(db, async (trx) => {
        await changeUser(trx, userId, { lastSignInAt: Date.now() });
        const profileChanged = await applyProfile(trx, cache, ctx, state, userId);
        if ((await applyLinks(trx, cache, state, userId)) || profileChanged) {
          await recordUserDataEvent(trx, cache, ctx, 'User.Data.Updated', userId);
        }
        const event = state.interactionEvent === 'Register' ? 'PostRegister' : 'PostSignIn';
        await recordInteractionEvent(trx, cache, ctx, event, interactionDetails(state, interaction, userId));
      });
      const redirectTo = await finishSignIn(ctx, await oidc.provider(), userId);
      await deleteState(db, interaction.uid);
      auditSubmit(audit, ctx, state, interaction, userId);
      signIns.inc({ event: state.interactionEvent });
      return { redirectTo };
    },
  );
}
