import { z } from 'zod';

import { RequestError } from '../../http/errors.ts';
import { assertPasswordAccepted, type PwnedLookup } from '../../sign-in-experience/password-policy.ts';
import { currentSignInExperience } from '../../sign-in-experience/sign-in-experience.ts';
import { assertUsernameAllowed } from '../../sign-in-experience/username-policy.ts';
import { hashPassword } from '../../users/passwords.ts';
import type { UserRow } from '../../users/queries.ts';
import { username } from '../../users/schemas.ts';
import { assertIdentifiersFree, getUserRow, userInfoOf } from '../../users/users.ts';
import type { ExperienceContext } from '../context.ts';
import { verifiedInteraction } from '../mfa/mfa-steps.ts';
import { addressFromRecord, assertNotInAccount } from '../sign-in-profile.ts';
import { getRecord, requireUser, requireVerified } from '../state.ts';
import type { ExperienceState } from '../state-queries.ts';
import { type Flow, type Step } from './run.ts';

export const profileBody = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('username'), value: username }),
  z.strictObject({ type: z.literal('password'), value: z.string().min(1).max(256) }),
  z.strictObject({ type: z.enum(['email', 'phone']), verificationId: z.string().min(1).max(64) }),
  z.strictObject({ type: z.literal('social'), verificationId: z.string().min(1).max(64) }),
]);

type ProfileFlow = Flow<z.output<typeof profileBody>, undefined> & {
  /** An identified account keeps what it has: the profile only fills its gaps. */
  account?: UserRow;
  addition?: ExperienceState['profile'];
};

/**
 * `POST /api/experience/profile`: a username, a password, a verified address or a social identity
 * added to the profile the interaction builds; applied to the account at submit.
 */
export function profileSteps({
  db,
  cache,
  isPwned,
}: ExperienceContext & { isPwned: PwnedLookup }): Step<ProfileFlow>[] {
  const refusePasswordReset: Step<ProfileFlow> = ({ session }) => {
    if (session.state.interactionEvent === 'ForgotPassword') {
      throw new RequestError('session.not_supported_for_forgot_password', undefined, { status: 400 });
    }
  };

  // A sign-in's profile is the identified account's, added once its second factor is proven
  // (Logto's order); a social identity may come first: submit still asks for the factor.
  const proveSecondFactorFirst: Step<ProfileFlow> = async ({ session, body }) => {
    if (session.state.interactionEvent !== 'SignIn') {
      return;
    }
    if (body.type === 'social') {
      requireUser(session.state);
    } else {
      await verifiedInteraction(db, cache, session);
    }
  };

  const loadAccount: Step<ProfileFlow> = async (flow) => {
    const { userId } = flow.session.state;
    flow.account = userId ? await getUserRow(db, userId) : undefined;
  };

  const addUsername: Step<ProfileFlow> = async (flow) => {
    if (flow.body.type === 'username') {
      assertNotInAccount(flow.account, { username: flow.body.value });
      assertUsernameAllowed(flow.body.value, (await currentSignInExperience(db, cache)).usernamePolicy);
      await assertIdentifiersFree(db, { username: flow.body.value });
      flow.addition = { username: flow.body.value };
    }
  };

  const addPassword: Step<ProfileFlow> = async (flow) => {
    const { body, account, session } = flow;
    if (body.type !== 'password') {
      return;
    }
    const settings = await currentSignInExperience(db, cache);
    await assertPasswordAccepted(
      body.value,
      { policy: settings.passwordPolicy, isPwned },
      { ...(account && userInfoOf(account)), ...session.state.profile },
    );
    flow.addition = { passwordDigest: await hashPassword(body.value) };
    assertNotInAccount(account, flow.addition);
  };

  // Linked at submit to whoever this interaction signs in (proved by password, code...).
  const addSocialIdentity: Step<ProfileFlow> = (flow) => {
    const { body, session } = flow;
    if (body.type !== 'social') {
      return;
    }
    if (requireVerified(getRecord(session.state, body.verificationId)).type !== 'Social') {
      throw new RequestError('session.verification_failed', { reason: 'This verification is not a social sign-in.' });
    }
    flow.addition = { socialVerificationId: body.verificationId };
  };

  const addAddress: Step<ProfileFlow> = async (flow) => {
    const { body, account, session } = flow;
    if (body.type !== 'email' && body.type !== 'phone') {
      return;
    }
    const settings = await currentSignInExperience(db, cache);
    flow.addition = await addressFromRecord(db, cache, settings, session.state, body.verificationId, account);
  };

  const saveProfile: Step<ProfileFlow> = async ({ session, addition }) => {
    await session.save({ ...session.state, profile: { ...session.state.profile, ...addition } });
  };

  return [
    refusePasswordReset,
    proveSecondFactorFirst,
    loadAccount,
    addUsername,
    addPassword,
    addSocialIdentity,
    addAddress,
    saveProfile,
  ];
}
