import { z } from 'zod';

import type { Api } from '../../http/api/route.ts';
import { RequestError } from '../../http/errors.ts';
import type { CodePurpose } from '../../messages/codes.ts';
import { assertEmailAllowed } from '../../sign-in-experience/email-blocklist.ts';
import { isPasswordExpired } from '../../sign-in-experience/password-expiration.ts';
import { assertPasswordAccepted } from '../../sign-in-experience/password-policy.ts';
import { pwnedPasswordLookup } from '../../sign-in-experience/pwned-passwords.ts';
import type { SignInExperience } from '../../sign-in-experience/schemas.ts';
import { currentSignInExperience } from '../../sign-in-experience/sign-in-experience.ts';
import { assertUsernameAllowed } from '../../sign-in-experience/username-policy.ts';
import { generateId } from '../../storage/ids.ts';
import { hashPassword, verifyNothing } from '../../users/passwords.ts';
import { findUserByIdentifier } from '../../users/queries.ts';
import { username } from '../../users/schemas.ts';
import { assertIdentifiersFree, verifyUserPassword } from '../../users/users.ts';
import { assertCaptchaPassed } from '../captcha.ts';
import type { ExperienceContext } from '../context.ts';
import { recordExceptionEvent } from '../events.ts';
import { codeIdentifierSchema, verifyCodeGuarded } from '../guarded-checks.ts';
import { sendEndUserCode } from '../guarded-checks.ts';
import { assertNotLocked, failVerification, recordSuccess, sentinelTarget } from '../lockout/lockout.ts';
import { getRecord } from '../state.ts';
import {
  type ExperienceState,
  type Identifier,
  identifierSchema,
  type InteractionEvent,
  interactionEvents,
} from '../state-queries.ts';
import { messageAbout } from './message-about.ts';

const tag = 'Experience';
const verificationResponse = z.object({ verificationId: z.string() });

/**
 * Logto's anti-enumeration: a code for an address no account holds is made (its send counted, a
 * guess answered as a wrong code) but not delivered in a password reset, and in a sign-in not yet
 * identified while registration is closed (`signInMode: SignIn`).
 */
const deliveredOnlyToAccounts = (settings: SignInExperience, state: ExperienceState, event: InteractionEvent) =>
  event === 'ForgotPassword' || (event === 'SignIn' && !state.userId && settings.signInMode === 'SignIn');

/**
 * The message a code goes out as: the interaction's event, or `BindMfa` once a user is identified
 * and the address is not one the sign-up settings ask for (it is being added as a second factor).
 */
function codePurposeOf(
  settings: SignInExperience,
  state: ExperienceState,
  { identifier, interactionEvent }: { identifier: { type: 'email' | 'phone' }; interactionEvent: InteractionEvent },
): CodePurpose {
  const { identifiers, secondaryIdentifiers = [] } = settings.signUp;
  const askedAtSignUp =
    identifiers.includes(identifier.type) ||
    secondaryIdentifiers.some(({ identifier: asked }) => asked === identifier.type || asked === 'emailOrPhone');
  return state.userId && !askedAtSignUp ? 'BindMfa' : interactionEvent;
}

/** The experience's proofs: a password, a new username + password, a code sent to an email or phone. */
export function experienceVerificationRoutes(
  api: Api<'own-transactions'>,
  { db, cache, sessions, messages: connectors, config, logger }: ExperienceContext,
): void {
  const isPwned = pwnedPasswordLookup(config.pwnedPasswordsUrl, logger);
  api.add(
    {
      method: 'post',
      path: '/experience/verification/password',
      summary: 'Verify an identifier and its password',
      tag,
      body: z.strictObject({ identifier: identifierSchema, password: z.string().min(1).max(256) }),
      response: verificationResponse,
      errors: [401, 404, 422],
    },
    async ({ body }, ctx) => {
      const session = await sessions.load(ctx);
      const settings = await currentSignInExperience(db, cache);
      const { identifier } = body;
      if (!settings.signIn.methods.some((method) => method.identifier === identifier.type && method.password)) {
        throw new RequestError('user.sign_in_method_not_enabled');
      }
      const user = await findUserByIdentifier(db, identifier.type, identifier.value, settings.usernamePolicy);
      const target = sentinelTarget(identifier, user);
      await assertNotLocked(db, target);
      // An unknown identifier costs the same time and counts the same failure as a wrong password.
      const matches = user ? await verifyUserPassword(db, user, body.password) : await verifyNothing(body.password);
      if (!user || !matches) {
        return failVerification(
          db,
          target,
          settings.sentinelPolicy,
          new RequestError('session.invalid_credentials'),
          () =>
            recordExceptionEvent(db, cache, 'Identifier.Lockout', { type: identifier.type, value: identifier.value }),
        );
      }
      await recordSuccess(db, target);
      if (user.is_suspended) {
        throw new RequestError('user.suspended');
      }
      if (isPasswordExpired(settings.passwordExpiration, user.password_updated_at)) {
        throw new RequestError('password.expired');
      }
      const id = generateId();
      session.state.records[id] = { id, type: 'Password', identifier, userId: user.id, verified: true };
      await session.save(session.state);
      return { verificationId: id };
    },
  );

  api.add(
    {
      method: 'post',
      path: '/experience/verification/new-password-identity',
      summary: 'Propose a new username and password (registration)',
      tag,
      body: z.strictObject({
        identifier: z.strictObject({ type: z.literal('username'), value: username }),
        password: z.string().min(1).max(256),
      }),
      response: verificationResponse,
      errors: [422],
    },
    async ({ body }, ctx) => {
      const session = await sessions.load(ctx);
      const settings = await currentSignInExperience(db, cache);
      assertUsernameAllowed(body.identifier.value, settings.usernamePolicy);
      await assertIdentifiersFree(db, { username: body.identifier.value });
      await assertPasswordAccepted(
        body.password,
        { policy: settings.passwordPolicy, isPwned },
        { username: body.identifier.value },
      );
      const id = generateId();
      session.state.records[id] = {
        id,
        type: 'NewPasswordIdentity',
        identifier: body.identifier,
        passwordDigest: await hashPassword(body.password),
        verified: true,
      };
      await session.save(session.state);
      return { verificationId: id };
    },
  );

  api.add(
    {
      method: 'post',
      path: '/experience/verification/verification-code',
      summary: 'Send a verification code to an email or phone',
      tag,
      body: z.strictObject({ identifier: codeIdentifierSchema, interactionEvent: z.enum(interactionEvents) }),
      response: verificationResponse,
      errors: [422, 429],
    },
    async ({ body }, ctx) => {
      const session = await sessions.load(ctx);
      const { state } = session;
      const settings = await currentSignInExperience(db, cache);
      // Logto's: a code costs a message, so no one unidentified sends one without the captcha.
      if (!state.userId) {
        assertCaptchaPassed(settings, state);
      }
      const identifier = body.identifier as Identifier;
      if (body.interactionEvent === 'Register' && identifier.type === 'email') {
        // Before anything is sent: a code to an address no account may hold would be wasted.
        assertEmailAllowed(settings.emailBlocklistPolicy, identifier.value);
      }
      const known = Boolean(await findUserByIdentifier(db, identifier.type, identifier.value));
      const { codeId } = await sendEndUserCode(
        db,
        cache,
        connectors,
        body.identifier,
        codePurposeOf(settings, state, body),
        await messageAbout(ctx, { db, cache }, session.interaction),
        known || !deliveredOnlyToAccounts(settings, state, body.interactionEvent),
      );
      const type = identifier.type === 'email' ? 'EmailVerificationCode' : 'PhoneVerificationCode';
      // A new code replaces the interaction's earlier one for that channel (Logto's): the old record is gone.
      const records = Object.fromEntries(Object.entries(state.records).filter(([, record]) => record.type !== type));
      const id = generateId();
      records[id] = { id, type, identifier, codeId, verified: false };
      await session.save({ ...state, records });
      return { verificationId: id };
    },
  );

  api.add(
    {
      method: 'post',
      path: '/experience/verification/verification-code/verify',
      summary: 'Verify a code sent to an email or phone',
      tag,
      body: z.strictObject({
        identifier: codeIdentifierSchema,
        verificationId: z.string().min(1).max(64),
        code: z.string().min(1).max(16),
      }),
      response: verificationResponse,
      errors: [404],
    },
    async ({ body }, ctx) => {
      const session = await sessions.load(ctx);
      const record = getRecord(session.state, body.verificationId);
      const identifier = body.identifier as Identifier;
      // A record of the other channel is not this one's (404); of another address, Logto's mismatch (400).
      if (record.type !== (identifier.type === 'email' ? 'EmailVerificationCode' : 'PhoneVerificationCode')) {
        throw new RequestError('session.verification_session_not_found');
      }
      if (record.identifier.value !== identifier.value) {
        throw new RequestError(
          identifier.type === 'email' ? 'verification_code.email_mismatch' : 'verification_code.phone_mismatch',
        );
      }
      const { sentinelPolicy } = await currentSignInExperience(db, cache);
      await verifyCodeGuarded(db, cache, sentinelPolicy, {
        codeId: record.codeId,
        identifier: body.identifier,
        code: body.code,
      });
      session.state.records[record.id] = { ...record, verified: true };
      await session.save(session.state);
      return { verificationId: record.id };
    },
  );
}
