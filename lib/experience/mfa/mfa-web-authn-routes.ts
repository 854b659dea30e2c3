import { z } from 'zod';

import type { Api } from '../../http/api/route.ts';
import { RequestError } from '../../http/errors.ts';
import { findWebAuthnFactor, listFactors } from '../../mfa/queries.ts';
import { enabledFactors } from '../../mfa/sign-in-requirement.ts';
import {
  authenticationOptions,
  registrationOptions,
  relyingPartyOf,
  verifyRegistration,
  webAuthnAuthenticationPayload,
  webAuthnRegistrationPayload,
} from '../../mfa/webauthn.ts';
import { currentSignInExperience } from '../../sign-in-experience/sign-in-experience.ts';
import { generateId } from '../../storage/ids.ts';
import { getUserRow } from '../../users/users.ts';
import type { ExperienceContext } from '../context.ts';
import type { ExperienceSession } from '../session.ts';
import { getRecord } from '../state.ts';
import { identifiedUser, mfaTag, saveRecord, verificationResponse } from './mfa-steps.ts';
import { verifySecondFactorPasskey } from './second-factor.ts';

const verificationId = z.string().min(1).max(64);
/** The options as @simplewebauthn/browser's `startRegistration`/`startAuthentication` take them (`optionsJSON`). */
const options = z.looseObject({ challenge: z.string() });

/** The ceremony the verification started, for the user identified; another's or another kind is not found (Logto: 404). */
function ceremonyRecord(session: ExperienceSession, id: string, ceremony: 'registration' | 'authentication') {
  const record = getRecord(session.state, id);
  if (record.type !== 'WebAuthn' || record.ceremony !== ceremony || record.userId !== identifiedUser(session)) {
    throw new RequestError('session.verification_session_not_found');
  }
  return record;
}

/**
 * Passkeys as a second factor in the sign-in flow (Logto's `web-authn` verification routes): register
 * one (bound at submit with POST /experience/profile/mfa), or prove one the user holds. The relying
 * party is `ENDPOINT`: its host name is the RP id, its origin the only origin accepted.
 */
export function experienceWebAuthnRoutes(
  api: Api<'own-transactions'>,
  { db, cache, sessions, config }: ExperienceContext,
): void {
  const rp = relyingPartyOf(config.endpoint);

  api.add(
    {
      method: 'post',
      path: '/experience/verification/web-authn/registration',
      summary: 'Start registering a passkey: options for navigator.credentials.create()',
      tag: mfaTag,
      response: z.object({ verificationId: z.string(), registrationOptions: options }),
      errors: [404],
    },
    async (_input, ctx) => {
      const session = await sessions.load(ctx);
      const userId = identifiedUser(session);
      if (!enabledFactors(await currentSignInExperience(db, cache)).includes('WebAuthn')) {
        throw new RequestError('session.mfa.mfa_factor_not_enabled', {
          reason: 'WebAuthn is not enabled in the sign-in experience.',
        });
      }
      const user = await getUserRow(db, userId);
      const passkeys = (await listFactors(db, userId)).filter((factor) => factor.type === 'WebAuthn');
      const name = user.username ?? user.primary_email ?? user.primary_phone ?? user.id;
      const created = await registrationOptions(rp, { id: userId, name, displayName: user.name ?? name }, passkeys);
      const id = await saveRecord(session, {
        id: generateId(),
        type: 'WebAuthn',
        userId,
        ceremony: 'registration',
        challenge: created.challenge,
        verified: false,
      });
      return { verificationId: id, registrationOptions: { ...created } };
    },
  );

  api.add(
    {
      method: 'post',
      path: '/experience/verification/web-authn/registration/verify',
      summary: "Verify the authenticator's answer to a passkey registration",
      tag: mfaTag,
      body: z.strictObject({ verificationId, payload: webAuthnRegistrationPayload }),
      response: verificationResponse,
      errors: [404, 422],
    },
    async ({ body }, ctx) => {
      const session = await sessions.load(ctx);
      const record = ceremonyRecord(session, body.verificationId, 'registration');
      const passkey = await verifyRegistration(rp, record.challenge, body.payload);
      if (!passkey) {
        throw new RequestError('session.mfa.webauthn_verification_failed');
      }
      if (await findWebAuthnFactor(db, passkey.credentialId)) {
        throw new RequestError('user.webauthn_already_in_use');
      }
      return { verificationId: await saveRecord(session, { ...record, passkey, verified: true }) };
    },
  );

  api.add(
    {
      method: 'post',
      path: '/experience/verification/web-authn/authentication',
      summary: "Start proving one of the user's passkeys: options for navigator.credentials.get()",
      tag: mfaTag,
      response: z.object({ verificationId: z.string(), authenticationOptions: options }),
      errors: [404],
    },
    async (_input, ctx) => {
      const session = await sessions.load(ctx);
      const userId = identifiedUser(session);
      const passkeys = (await listFactors(db, userId)).filter((factor) => factor.type === 'WebAuthn');
      if (passkeys.length === 0) {
        throw new RequestError('session.mfa.mfa_factor_not_enabled', { reason: 'This account has no passkey.' });
      }
      const requested = await authenticationOptions(rp, passkeys);
      const id = await saveRecord(session, {
        id: generateId(),
        type: 'WebAuthn',
        userId,
        ceremony: 'authentication',
        challenge: requested.challenge,
        verified: false,
      });
      return { verificationId: id, authenticationOptions: { ...requested } };
    },
  );

  api.add(
    {
      method: 'post',
      path: '/experience/verification/web-authn/authentication/verify',
      summary: "Prove the second factor with the authenticator's signed answer",
      tag: mfaTag,
      body: z.strictObject({ verificationId, payload: webAuthnAuthenticationPayload }),
      response: verificationResponse,
      errors: [404],
    },
    async ({ body }, ctx) => {
      const session = await sessions.load(ctx);
      const record = ceremonyRecord(session, body.verificationId, 'authentication');
      const { sentinelPolicy } = await currentSignInExperience(db, cache);
      await verifySecondFactorPasskey(db, cache, sentinelPolicy, record.userId, {
        rp,
        challenge: record.challenge,
        payload: body.payload,
      });
      const id = await saveRecord(
        session,
        { ...record, verified: true },
        { mfa: { ...session.state.mfa, verified: true } },
      );
      return { verificationId: id };
    },
  );
}
