import { provisionByEmailDomain, provisionByOneTimeToken } from '../../organizations/jit/jit-provisioning.ts';
import type { SignInExperience } from '../../sign-in-experience/schemas.ts';
import { currentSignInExperience } from '../../sign-in-experience/sign-in-experience.ts';
import { withTransaction } from '../../storage/transaction.ts';
import { assertIdentifiersFree } from '../../users/users.ts';
import { assertCaptchaPassed } from '../captcha.ts';
import type { ExperienceContext } from '../context.ts';
import { recordUserDataEvent } from '../events.ts';
import { identifyExternal } from '../external/external-identification.ts';
import { assertEmailForAccount, identifyUser, profileFromRecord, registerUser } from '../identification.ts';
import { afterRegistration } from '../sign-in-profile.ts';
import { getRecord, requireVerified } from '../state.ts';
import type { ExperienceState, VerificationRecord } from '../state-queries.ts';
import { type Flow, loaded, type Step } from './run.ts';

type IdentificationFlow = Flow<{ verificationId?: string; linkSocialIdentity?: boolean }, undefined> & {
  settings?: SignInExperience;
  record?: VerificationRecord;
};

/** The state with its user set; second-factor progress belongs to a user and does not carry over to another. */
const identified = (state: ExperienceState, userId: string): ExperienceState => ({
  ...state,
  userId,
  mfa: state.userId === userId ? state.mfa : undefined,
});

/**
 * `POST /api/experience/identification`: a sign-in or a reset finds its user (204), a registration
 * creates the account (201); an outside IdP's verification does either, whichever the page started.
 */
export function identificationSteps({ db, cache }: ExperienceContext): Step<IdentificationFlow>[] {
  const readVerification: Step<IdentificationFlow> = async (flow) => {
    flow.settings = await currentSignInExperience(db, cache);
    const { verificationId } = flow.body;
    flow.record = verificationId ? getRecord(flow.session.state, verificationId) : undefined;
  };

  const identifyByIdp: Step<IdentificationFlow> = async (flow) => {
    const { ctx, session, record, body } = flow;
    if (record?.type !== 'Social' && record?.type !== 'EnterpriseSso') {
      return;
    }
    requireVerified(record);
    const outcome = await withTransaction(db, (trx) =>
      identifyExternal(trx, cache, ctx, session.state, record, body.linkSocialIdentity ?? false),
    );
    // An IdP's new user registered; a known one signed in, whichever the page started with.
    await session.save({
      ...identified(session.state, outcome.userId),
      interactionEvent: outcome.created ? 'Register' : 'SignIn',
    });
    ctx.status = outcome.created ? 201 : 204;
    flow.answer = { value: undefined };
  };

  const identifyAccount: Step<IdentificationFlow> = async (flow) => {
    const { ctx, session, record, body } = flow;
    const { state } = session;
    if (state.interactionEvent === 'Register') {
      return;
    }
    const settings = loaded(flow.settings, 'the settings');
    const next = identified(state, await identifyUser(db, cache, state, body.verificationId, settings));
    if (record?.type === 'OneTimeToken' && next.userId && record.jitOrganizationIds.length > 0) {
      // An invitation by magic link: the person joins its organizations once identified.
      const { userId } = next;
      await withTransaction(db, (trx) => provisionByOneTimeToken(trx, cache, ctx, userId, record.jitOrganizationIds));
    }
    // A passkey that verified its user (PIN, biometrics) is both factors: no second one is asked (docs/decisions.md).
    await session.save(record?.type === 'SignInPasskey' ? { ...next, mfa: { ...next.mfa, verified: true } } : next);
    flow.answer = { value: undefined };
  };

  /** Before the account exists: a refused registration leaves nothing behind. */
  const passCaptcha: Step<IdentificationFlow> = (flow) => {
    assertCaptchaPassed(loaded(flow.settings, 'the settings'), flow.session.state);
  };

  const registerAccount: Step<IdentificationFlow> = async (flow) => {
    const { ctx, session, record, body } = flow;
    const { state } = session;
    const settings = loaded(flow.settings, 'the settings');
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
    flow.answer = { value: undefined };
  };

  return [readVerification, identifyByIdp, identifyAccount, passCaptcha, registerAccount];
}
