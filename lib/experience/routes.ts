import { z } from 'zod';

import type { Api } from '../http/api/route.ts';
import { RequestError } from '../http/errors.ts';
import { assertPasswordAccepted } from '../sign-in-experience/password-policy.ts';
import { pwnedPasswordLookup } from '../sign-in-experience/pwned-passwords.ts';
import type { SignInExperience } from '../sign-in-experience/schemas.ts';
import { currentSignInExperience } from '../sign-in-experience/sign-in-experience.ts';
import { hashPassword, verifyPassword } from '../users/passwords.ts';
import { getUserRow, userInfoOf } from '../users/users.ts';
import { captchaCheck } from './captcha.ts';
import type { ExperienceContext } from './context.ts';
import { newState, requireUser } from './state.ts';
import { type InteractionEvent, interactionEvents } from './state-queries.ts';
import { identificationSteps } from './steps/identification.ts';
import { profileBody, profileSteps } from './steps/profile.ts';
import { runSteps } from './steps/run.ts';
import { submitSteps } from './steps/submit.ts';

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

/** Sign-in, registration and password reset over one provider interaction (EXPERIENCE-API.md). */
export function experienceRoutes(api: Api<'own-transactions'>, context: ExperienceContext): void {
  const { db, cache, sessions, config, logger } = context;
  const isPwned = pwnedPasswordLookup(config.pwnedPasswordsUrl, logger);
  const identification = identificationSteps(context);
  const profile = profileSteps({ ...context, isPwned });
  const submit = submitSteps(context);
  const checkCaptcha = captchaCheck(context);
  api.add(
    {
      method: 'put',
      path: '/experience',
      summary:
        "Start (or restart) an experience for the current interaction, with the captcha widget's token when the captcha policy is on",
      tag,
      body: eventBody.extend({ captchaToken: z.string().max(8192).optional() }),
      errors: [422],
    },
    async ({ body }, ctx) => {
      const interaction = await sessions.interaction(ctx);
      assertEventAllowed(body.interactionEvent, await currentSignInExperience(db, cache));
      // Logto's: a token is checked whenever one comes; whether one was needed is decided later.
      if (body.captchaToken) {
        await checkCaptcha(body.captchaToken);
      }
      await sessions.saver(interaction)({
        ...newState(body.interactionEvent),
        ...(body.captchaToken && { captchaVerified: true as const }),
      });
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
      await runSteps(identification, { ctx, body, session: await sessions.load(ctx) });
    },
  );

  api.add(
    {
      method: 'post',
      path: '/experience/profile',
      summary: 'Add a username, password, or verified email/phone to the profile being built',
      tag,
      body: profileBody,
      errors: [404, 422],
    },
    async ({ body }, ctx) => {
      await runSteps(profile, { ctx, body, session: await sessions.load(ctx) });
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
    async (_input, ctx) => runSteps(submit, { ctx, body: undefined, session: await sessions.load(ctx) }),
  );
}
