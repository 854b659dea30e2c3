import type { AuthenticatorTransportFuture } from '@simplewebauthn/server';
import { z } from 'zod';

import { foreignJsonInput } from '../http/limits.ts';
import { type FactorRow, transportsOf } from './queries.ts';

/*
 * Passkeys (WebAuthn): @simplewebauthn/server does the protocol; this module says who the relying
 * party is and what is kept. Attestation is not asked for (`none`): a passkey is a second factor
 * the user chose, not a device the operator vets.
 */

/**
 * The library is loaded at the first passkey ceremony, not at start: with its dependencies it holds
 * about 20 MB that an instance whose users never use a passkey need not keep.
 */
const library = () => import('@simplewebauthn/server');

const base64url = z
  .string()
  .min(1)
  .max(4096)
  .regex(/^[\w-]*={0,2}$/);
const transports = z.array(z.enum(['ble', 'cable', 'hybrid', 'internal', 'nfc', 'smart-card', 'usb'])).max(8);
/** The browser's extension outputs: not used, only bounded. */
const clientExtensionResults = foreignJsonInput;

/** What `navigator.credentials.create()` answered (as @simplewebauthn/browser serialises it): Logto's `bindWebAuthnPayloadGuard`. */
export const webAuthnRegistrationPayload = z.object({
  type: z.literal('WebAuthn'),
  id: base64url,
  rawId: base64url,
  response: z.object({
    clientDataJSON: base64url,
    attestationObject: base64url,
    authenticatorData: base64url.optional(),
    transports: transports.optional(),
    publicKeyAlgorithm: z.number().optional(),
    publicKey: base64url.optional(),
  }),
  authenticatorAttachment: z.enum(['cross-platform', 'platform']).optional(),
  clientExtensionResults,
});

/** What `navigator.credentials.get()` answered: Logto's `webAuthnVerificationPayloadGuard`. */
export const webAuthnAuthenticationPayload = z.object({
  type: z.literal('WebAuthn'),
  id: base64url,
  rawId: base64url,
  response: z.object({
    clientDataJSON: base64url,
    authenticatorData: base64url,
    signature: base64url,
    userHandle: base64url.optional(),
  }),
  authenticatorAttachment: z.enum(['cross-platform', 'platform']).optional(),
  clientExtensionResults,
});

export type WebAuthnRegistrationPayload = z.output<typeof webAuthnRegistrationPayload>;
export type WebAuthnAuthenticationPayload = z.output<typeof webAuthnAuthenticationPayload>;

/** A passkey as bound to an account: what verifying a registration yields. */
export const newPasskeySchema = z.object({
  credentialId: z.string(),
  publicKey: z.string(),
  counter: z.number(),
  transports: z.array(z.string()),
});
export type NewPasskey = z.output<typeof newPasskeySchema>;

/** The relying party: its id is `ENDPOINT`'s host name, its one origin `ENDPOINT`'s origin. */
export type RelyingParty = { id: string; name: string; origin: string };

export function relyingPartyOf(endpoint: string): RelyingParty {
  const url = new URL(endpoint);
  return { id: url.hostname, name: url.host, origin: url.origin };
}

const descriptorOf = (factor: FactorRow) => ({
  id: factor.credential_id,
  transports: transportsOf(factor) as AuthenticatorTransportFuture[],
});

/** Options for `navigator.credentials.create()`; the user's passkeys are excluded (no second row for one authenticator). */
export async function registrationOptions(
  rp: RelyingParty,
  user: { id: string; name: string; displayName?: string },
  existing: FactorRow[],
) {
  const { generateRegistrationOptions } = await library();
  return generateRegistrationOptions({
    rpID: rp.id,
    rpName: rp.name,
    userID: new TextEncoder().encode(user.id),
    userName: user.name,
    userDisplayName: user.displayName ?? user.name,
    attestationType: 'none',
    excludeCredentials: existing.map(descriptorOf),
    authenticatorSelection: { residentKey: 'preferred', userVerification: 'preferred' },
  });
}

/** The passkey a registration proves, or undefined when the response does not verify. */
export async function verifyRegistration(
  rp: RelyingParty,
  challenge: string,
  payload: WebAuthnRegistrationPayload,
): Promise<NewPasskey | undefined> {
  const { verifyRegistrationResponse } = await library();
  try {
    const { verified, registrationInfo } = await verifyRegistrationResponse({
      response: { ...payload, type: 'public-key' },
      expectedChallenge: challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      requireUserVerification: false,
    });
    if (!verified) {
      return undefined;
    }
    const { credential } = registrationInfo;
    return {
      credentialId: credential.id,
      publicKey: Buffer.from(credential.publicKey).toString('base64url'),
      counter: credential.counter,
      transports: payload.response.transports ?? [],
    };
  } catch {
    // The library throws for every malformed or mismatched response: all are a failed verification.
    return undefined;
  }
}

/** Options for `navigator.credentials.get()`, offering the given passkeys (none: any discoverable one). */
export async function authenticationOptions(rp: RelyingParty, allowed: FactorRow[]) {
  const { generateAuthenticationOptions } = await library();
  return generateAuthenticationOptions({
    rpID: rp.id,
    allowCredentials: allowed.map(descriptorOf),
    userVerification: 'preferred',
  });
}

/** The passkey's new signature counter, or undefined when the assertion does not verify with its key. */
export async function verifyAuthentication(
  rp: RelyingParty,
  challenge: string,
  payload: WebAuthnAuthenticationPayload,
  factor: FactorRow,
  { requireUserVerification = false } = {},
): Promise<number | undefined> {
  if (factor.public_key === null || payload.id !== factor.credential_id) {
    return undefined;
  }
  const { verifyAuthenticationResponse } = await library();
  try {
    const { verified, authenticationInfo } = await verifyAuthenticationResponse({
      response: { ...payload, type: 'public-key' },
      expectedChallenge: challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      credential: {
        id: factor.credential_id,
        publicKey: new Uint8Array(Buffer.from(factor.public_key, 'base64url')),
        counter: factor.counter ?? 0,
      },
      requireUserVerification,
    });
    return verified ? authenticationInfo.newCounter : undefined;
  } catch {
    return undefined;
  }
}
