import { z } from 'zod';

import type { Api } from '../../http/api/route.ts';
import { RequestError } from '../../http/errors.ts';
import { findWebAuthnFactor, listFactors } from '../../mfa/queries.ts';
import { authenticationOptions, relyingPartyOf, webAuthnAuthenticationPayload } from '../../mfa/webauthn.ts';
import type { SignInExperience } from '../../sign-in-experience/schemas.ts';
import { currentSignInExperience } from '../../sign-in-experience/sign-in-experience.ts';
import { generateId } from '../../storage/ids.ts';
import { findUserByIdentifier } from '../../users/queries.ts';
import type { ExperienceContext } from '../context.ts';
import { getRecord, newState } from '../state.ts';
import { findState, identifierSchema } from '../state-queries.ts';
import { saveRecord, verificationResponse } from './mfa-steps.ts';
import { verifySecondFactorPasskey } from './second-factor.ts';

const tag = 'Experience';
/** The options as @simplewebauthn/browser's `startAuthentication` takes them (`optionsJSON`). */
const options = z.looseObject({ challenge: z.string() });

function assertPasskeySignIn(settings: SignInExperience): void {
  if (!settings.passkeySignIn.enabled || settings.signInMode === 'Register') {
    throw new RequestError('user.sign_in_method_not_enabled');
  }
}

/** A passkey unknown here, or another account's than the one named: refused like a bad signature. */
const refused = () => new RequestError('session.mfa.webauthn_verification_failed');

/**
 * Passkeys as a sign-in method of their own (Logto's passkey sign-in): the assertion names the
 * account, no password or code comes first. Two ways in, as in Logto:
 * - discoverable: `preflight` options offer no credential, so the browser lists the passkeys it
 *   holds for this site (a button, or the identifier field's autofill); `verify` without a
 *   `verificationId` finds the account by the credential the browser chose;
 * - identifier first: options offering the named account's passkeys, verified with the record's id.
 * The verified record identifies the user at `POST /experience/identification` like a password.
 */
export function passkeySignInRoutes(api: Api<'own-transactions'>, { db, cache, sessions, config }: ExperienceContext) {
  const rp = relyingPartyOf(config.endpoint);

  api.add(
    {
      method: 'post',
      path: '/experience/preflight/sign-in-passkey/authentication',
      summary: 'Start a passkey sign-in where the browser picks the passkey: options for navigator.credentials.get()',
      tag,
      response: z.object({ authenticationOptions: options }),
      errors: [422],
    },
    async (_input, ctx) => {
      const interaction = await sessions.interaction(ctx);
      assertPasskeySignIn(await currentSignInExperience(db, cache));
      // The page asks before the person chose how to sign in: a sign-in starts if none is under way.
      const state = await findState(db, interaction.uid);
      const requested = await authenticationOptions(rp, []);
      const signingIn = state?.interactionEvent === 'SignIn' ? state : newState('SignIn');
      await sessions.saver(interaction)({ ...signingIn, signInPasskey: { challenge: requested.challenge } });
      return { authenticationOptions: { ...requested } };
    },
  );

  api.add(
    {
      method: 'post',
      path: '/experience/verification/sign-in-passkey/authentication',
      summary: "Start a passkey sign-in for a named account: options offering that account's passkeys",
      tag,
      body: z.strictObject({ identifier: identifierSchema }),
      response: z.object({ verificationId: z.string(), authenticationOptions: options }),
      errors: [404, 422],
    },
    async ({ body }, ctx) => {
      const session = await sessions.load(ctx);
      const settings = await currentSignInExperience(db, cache);
      assertPasskeySignIn(settings);
      const user = await findUserByIdentifier(db, body.identifier.type, body.identifier.value, settings.usernamePolicy);
      // An unknown account, or one without passkeys, gets options like any other (no credential to
      // offer): the answer does not tell who has an account; the ceremony then fails at verify.
      const passkeys = user ? (await listFactors(db, user.id)).filter((factor) => factor.type === 'WebAuthn') : [];
      const requested = await authenticationOptions(rp, passkeys);
      const id = await saveRecord(session, {
        id: generateId(),
        type: 'SignInPasskey',
        named: true,
        userId: user?.id,
        challenge: requested.challenge,
        verified: false,
      });
      return { verificationId: id, authenticationOptions: { ...requested } };
    },
  );

  api.add(
    {
      method: 'post',
      path: '/experience/verification/sign-in-passkey/authentication/verify',
      summary: "Verify the authenticator's answer to a passkey sign-in; the passkey names the account",
      tag,
      body: z.strictObject({
        verificationId: z.string().min(1).max(64).optional(),
        payload: webAuthnAuthenticationPayload,
      }),
      response: verificationResponse,
      errors: [404],
    },
    async ({ body }, ctx) => {
      const session = await sessions.load(ctx);
      const { state } = session;
      const settings = await currentSignInExperience(db, cache);
      assertPasskeySignIn(settings);
      let record;
      if (body.verificationId) {
        record = getRecord(state, body.verificationId);
        if (record.type !== 'SignInPasskey') {
          throw new RequestError('session.verification_session_not_found');
        }
      } else if (state.signInPasskey) {
        record = {
          id: generateId(),
          type: 'SignInPasskey' as const,
          named: false,
          ...state.signInPasskey,
          verified: false,
        };
      } else {
        throw new RequestError('session.verification_session_not_found');
      }
      // A challenge answers one ceremony: spent whatever the outcome.
      await session.save({ ...state, signInPasskey: undefined });
      const factor = await findWebAuthnFactor(db, body.payload.id);
      if (!factor || (record.named && factor.user_id !== record.userId)) {
        throw refused();
      }
      await verifySecondFactorPasskey(db, cache, settings.sentinelPolicy, factor.user_id, {
        rp,
        challenge: record.challenge,
        payload: body.payload,
        requireUserVerification: true,
      });
      const verified = { ...record, userId: factor.user_id, verified: true };
      return { verificationId: await saveRecord(session, verified, { signInPasskey: undefined }) };
    },
  );
}
