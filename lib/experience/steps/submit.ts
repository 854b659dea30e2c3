import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import type { Interaction } from 'oidc-provider';

import { findConnector } from '../../connectors/queries.ts';
import { RequestError } from '../../http/errors.ts';
import { signIns } from '../../metrics/metrics.ts';
import { storedBackupCodes } from '../../mfa/backup-codes.ts';
import { addFactor } from '../../mfa/factors.ts';
import { mfaOwed } from '../../mfa/sign-in-requirement.ts';
import { isMemberOfMfaOrganization } from '../../organizations/members/member-queries.ts';
import type { SignInExperience } from '../../sign-in-experience/schemas.ts';
import { currentSignInExperience } from '../../sign-in-experience/sign-in-experience.ts';
import type { SharedCache } from '../../storage/shared-cache.ts';
import { withTransaction } from '../../storage/transaction.ts';
import { linkSocialIdentity } from '../../users/identities.ts';
import { updateUser, type UserRow } from '../../users/queries.ts';
import { changeUser, getUserRow } from '../../users/users.ts';
import { assertCaptchaPassed } from '../captcha.ts';
import type { ExperienceContext } from '../context.ts';
import { recordInteractionEvent, recordUserDataEvent } from '../events.ts';
import { applyProfile, assertProfileFulfilled } from '../sign-in-profile.ts';
import { requireUser } from '../state.ts';
import { deleteState, type ExperienceState } from '../state-queries.ts';
import { type Flow, loaded, type Step } from './run.ts';

type SubmitFlow = Flow<undefined, { redirectTo: string } | undefined> & {
  userId?: string;
  settings?: SignInExperience;
  user?: UserRow;
  owed?: RequestError;
};

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

/**
 * A sign-in through an outside IdP is not asked for the profile the sign-up settings require: the
 * IdP answers for the account (Logto exempts enterprise SSO; we exempt social sign-in too, as its
 * registration here creates the account without asking: docs/decisions.md).
 */
const provenByIdp = (state: ExperienceState) =>
  Object.values(state.records).some(
    (record) => (record.type === 'EnterpriseSso' || record.type === 'Social') && record.verified,
  );

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

/**
 * `POST /api/experience/submit`: a sign-in or registration ends signed in (200 `{redirectTo}`), a
 * password reset saves the new password (204). Logto's order: prove the second factor, then
 * complete the profile, then enrol a factor.
 */
export function submitSteps({ db, cache, oidc, audit }: ExperienceContext): Step<SubmitFlow>[] {
  /** A finished interaction in the audit log, under Logto's keys (`Interaction.SignIn.Submit`, ...). */
  const auditSubmit = ({ ctx, session: { state, interaction } }: SubmitFlow, userId: string) =>
    audit.record(`Interaction.${state.interactionEvent}.Submit`, {
      result: 'Success',
      userId,
      applicationId: String(interaction.params.client_id),
      ip: ctx.ip,
      userAgent: ctx.get('user-agent'),
    });

  /** Logto's first check at submit, whatever the event. */
  const passCaptcha: Step<SubmitFlow> = async (flow) => {
    flow.settings = await currentSignInExperience(db, cache);
    assertCaptchaPassed(flow.settings, flow.session.state);
  };

  const requireIdentified: Step<SubmitFlow> = (flow) => {
    flow.userId = requireUser(flow.session.state);
  };

  const savePasswordReset: Step<SubmitFlow> = async (flow) => {
    const { ctx, session } = flow;
    const { state, interaction } = session;
    if (state.interactionEvent !== 'ForgotPassword') {
      return;
    }
    const userId = loaded(flow.userId, 'the user');
    const digest = state.newPasswordDigest;
    if (!digest) {
      throw new RequestError('user.new_password_required_in_profile');
    }
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
    auditSubmit(flow, userId);
    ctx.status = 204;
    flow.answer = { value: undefined };
  };

  const loadAccount: Step<SubmitFlow> = async (flow) => {
    flow.user = await getUserRow(db, loaded(flow.userId, 'the user'));
  };

  const proveSecondFactor: Step<SubmitFlow> = async (flow) => {
    const { state } = flow.session;
    const user = loaded(flow.user, 'the user');
    // A password reset was answered by savePasswordReset; this narrows the event for mfaOwed.
    if (state.interactionEvent === 'ForgotPassword') {
      return;
    }
    flow.owed = await mfaOwed(
      db,
      loaded(flow.settings, 'the settings'),
      state.interactionEvent,
      user,
      () => isMemberOfMfaOrganization(db, user.id),
      state.mfa,
      state.profile,
    );
    if (flow.owed?.code === 'session.mfa.require_mfa_verification') {
      throw flow.owed;
    }
  };

  const completeProfile: Step<SubmitFlow> = (flow) => {
    const { state } = flow.session;
    if (!provenByIdp(state)) {
      assertProfileFulfilled(state.profile, loaded(flow.settings, 'the settings'), loaded(flow.user, 'the user'));
    }
  };

  const enrolSecondFactor: Step<SubmitFlow> = (flow) => {
    if (flow.owed) {
      throw flow.owed;
    }
  };

  const applyToAccount: Step<SubmitFlow> = async (flow) => {
    const { ctx, session } = flow;
    const { state, interaction } = session;
    const userId = loaded(flow.userId, 'the user');
    await withTransaction(db, async (trx) => {
      await changeUser(trx, userId, { lastSignInAt: Date.now() });
      const profileChanged = await applyProfile(trx, cache, ctx, state, userId);
      if ((await applyLinks(trx, cache, state, userId)) || profileChanged) {
        await recordUserDataEvent(trx, cache, ctx, 'User.Data.Updated', userId);
      }
      const event = state.interactionEvent === 'Register' ? 'PostRegister' : 'PostSignIn';
      await recordInteractionEvent(trx, cache, ctx, event, interactionDetails(state, interaction, userId));
    });
  };

  /**
   * Ends the provider's interaction signed in; the browser goes back to /oidc/auth, where the
   * provider consents on a first-party application's behalf, or sends it to the consent page
   * (lib/oidc/consent-policy.ts).
   */
  const finishSignIn: Step<SubmitFlow> = async (flow) => {
    const { ctx, session } = flow;
    const userId = loaded(flow.userId, 'the user');
    const provider = await oidc.provider();
    const redirectTo = await provider.interactionResult(
      ctx.req,
      ctx.res,
      { login: { accountId: userId } },
      { mergeWithLastSubmission: false },
    );
    await deleteState(db, session.interaction.uid);
    auditSubmit(flow, userId);
    signIns.inc({ event: session.state.interactionEvent });
    flow.answer = { value: { redirectTo } };
  };

  return [
    passCaptcha,
    requireIdentified,
    savePasswordReset,
    loadAccount,
    proveSecondFactor,
    completeProfile,
    enrolSecondFactor,
    applyToAccount,
    finishSignIn,
  ];
}
