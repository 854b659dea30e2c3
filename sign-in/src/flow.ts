import { browserSupportsWebAuthn } from '@simplewebauthn/browser';

import { api, ApiError, type ExternalKind, fieldsOf, type MfaFactor } from './api.ts';

let leaving = false;

/** Sends the browser elsewhere; the page stays busy until it is gone. */
export function leave(url: string): void {
  leaving = true;
  window.location.assign(url);
}

export const isLeaving = (): boolean => leaving;

/** What the account owes before the provider lets it in: a second factor to prove, or to set up. */
export type SecondFactorStep =
  | { kind: 'verify'; factors: MfaFactor[]; masked: Partial<Record<MfaFactor, string>> }
  | { kind: 'enrol'; verificationId: string; secret: string; qrCode: string; skippable: boolean }
  /** A passkey to set up (`totp`: an authenticator app may be set up instead). */
  | { kind: 'passkey'; skippable: boolean; totp: boolean }
  | { kind: 'backup'; verificationId: string; codes: string[] };

/**
 * What the account lacks that the sign-up settings require (`user.missing_profile`), in the API's
 * names: `username`, `email`, `phone`, `password`, or alternatives such as `emailOrPhone`.
 */
export type ProfileStep = { kind: 'profile'; missing: string[] };

/** The fields a missing item names: `emailOrPhone` is an email or a phone. */
export const alternativesOf = (item: string): string[] =>
  item.split('Or').map((name) => name.charAt(0).toLowerCase() + name.slice(1));

const askable = new Set(['username', 'email', 'phone', 'password']);

/** A step the sign-in turns to before it finishes. */
export type Step = SecondFactorStep | ProfileStep;

/** The factors the pages prove: a passkey where the browser can use one. */
const handledFactors = (): Set<MfaFactor> =>
  new Set<MfaFactor>([
    'Totp',
    ...(browserSupportsWebAuthn() ? (['WebAuthn'] as const) : []),
    'PhoneVerificationCode',
    'EmailVerificationCode',
    'BackupCode',
  ]);

async function stepFor(error: ApiError): Promise<Step | undefined> {
  switch (error.code) {
    case 'user.missing_profile': {
      const missing = Array.isArray(error.data.missingProfile) ? error.data.missingProfile.map(String) : [];
      // Something the pages cannot ask for: the API's message says what it is.
      const asked =
        missing.length > 0 && missing.every((item) => alternativesOf(item).every((name) => askable.has(name)));
      return asked ? { kind: 'profile', missing } : undefined;
    }
    case 'session.mfa.require_mfa_verification': {
      // The pages offer the factors they handle: without WebAuthn in this browser, not a passkey.
      const offered = Array.isArray(error.data.availableFactors) ? error.data.availableFactors : [];
      const handled = handledFactors();
      const factors = offered.filter((factor): factor is MfaFactor => handled.has(factor as MfaFactor));
      if (factors.length === 0) {
        return undefined;
      }
      const masked = fieldsOf(error.data.maskedIdentifiers) as Partial<Record<MfaFactor, string>>;
      return { kind: 'verify', factors, masked };
    }
    case 'session.mfa.suggest_additional_mfa':
      // The pages do not offer a further factor beside an email, phone or passkey that signs in: declined.
      await api.skipMfaSuggestion();
      return finish();
    case 'user.suggest_mfa':
    case 'user.missing_mfa': {
      // The pages set up a passkey (where the browser can) or an authenticator app; adding an email
      // or phone as the factor is not offered here yet: without either, the API's message is what the page says.
      const available = Array.isArray(error.data.availableFactors) ? error.data.availableFactors : [];
      const totp = available.includes('Totp');
      if (available.includes('WebAuthn') && browserSupportsWebAuthn()) {
        return { kind: 'passkey', skippable: error.data.skippable === true, totp };
      }
      if (!totp) {
        return undefined;
      }
      const { verificationId, secret, secretQrCode } = await api.totpSecret();
      return { kind: 'enrol', verificationId, secret, qrCode: secretQrCode, skippable: error.data.skippable === true };
    }
    case 'session.mfa.backup_code_required': {
      const { verificationId, codes } = await api.backupCodes();
      return { kind: 'backup', verificationId, codes };
    }
    default:
      return undefined;
  }
}

/**
 * Ends the interaction: the provider takes the browser back to the application. Or, when the
 * account owes a second factor or lacks what the sign-up settings require, answers the step that
 * asks for it (which then finishes again).
 */
export async function finish(): Promise<Step | undefined> {
  let result: { redirectTo: string } | undefined;
  try {
    result = await api.submit();
  } catch (error) {
    const step = error instanceof ApiError ? await stepFor(error) : undefined;
    if (step) {
      return step;
    }
    throw error;
  }
  if (!result) {
    throw new Error('the submit named no redirect');
  }
  leave(result.redirectTo);
  return undefined;
}

// ---- Social and enterprise sign-in: to the connector's IdP and back to /callback ----

const externalKey = 'experience.external';

type External = { kind: ExternalKind; connectorId: string; state: string; verificationId: string };

/** Sends the browser to a connector's IdP; the callback page picks up from what is kept here. */
export async function startExternal(kind: ExternalKind, connectorId: string): Promise<void> {
  const state = crypto.randomUUID();
  const redirectUri = `${window.location.origin}/callback/${kind === 'sso' ? 'sso/' : ''}${encodeURIComponent(connectorId)}`;
  await api.start('SignIn');
  const { authorizationUri, verificationId } = await api.authorizationUri(kind, connectorId, state, redirectUri);
  const started: External = { kind, connectorId, state, verificationId };
  sessionStorage.setItem(externalKey, JSON.stringify(started));
  leave(authorizationUri);
}

/** The external sign-in this browser started, if the IdP sent back its `state`; it is used once. */
export function takeExternal(state: string | null): External | undefined {
  let kept: Record<string, unknown>;
  try {
    kept = fieldsOf(JSON.parse(sessionStorage.getItem(externalKey) ?? 'null'));
  } catch {
    return undefined;
  }
  const { kind, connectorId, verificationId } = kept;
  if (
    state === null ||
    kept.state !== state ||
    (kind !== 'social' && kind !== 'sso') ||
    typeof connectorId !== 'string' ||
    typeof verificationId !== 'string'
  ) {
    return undefined;
  }
  sessionStorage.removeItem(externalKey);
  return { kind, connectorId, state, verificationId };
}
