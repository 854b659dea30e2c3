import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/browser';

import type { Connector } from '../../lib/connectors/schemas.ts';
import type { Organization } from '../../lib/organizations/schemas.ts';
import type { Resource, Scope } from '../../lib/resources/schemas.ts';
import type { PublicCaptchaConfig } from '../../lib/sign-in-experience/captcha/captcha-schemas.ts';
import type { SignInExperience } from '../../lib/sign-in-experience/schemas.ts';
import type { User } from '../../lib/users/schemas.ts';
import { ApiError, fieldsOf } from '../../shared-ui/api-error.ts';

/**
 * The one client of the pages for the service's API: the Experience API (/api/experience, which the
 * provider's `_interaction` cookie authenticates) and the public sign-in settings. Answers are typed
 * in Logto's Experience API shapes, which the service's routes check; they are not checked again here.
 * Where the service has a schema for an answer's parts, the type is taken from it (type-only imports:
 * no server code reaches the pages' bundle).
 */

export { ApiError, fieldsOf };

async function request<T>(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown): Promise<T> {
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      credentials: 'same-origin',
      headers:
        body === undefined
          ? { accept: 'application/json' }
          : { accept: 'application/json', 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError(0, 'network', '');
  }
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  if (!response.ok) {
    throw ApiError.fromAnswer(response.status, parsed);
  }
  return parsed as T;
}

export type InteractionEvent = 'SignIn' | 'Register' | 'ForgotPassword';
export type ExternalKind = 'social' | 'sso';
export type MfaFactor = 'Totp' | 'WebAuthn' | 'PhoneVerificationCode' | 'EmailVerificationCode' | 'BackupCode';
/** Where a code goes: an email or a phone (for a second factor, the account's own, never an address typed here). */
export type CodeChannel = 'email' | 'phone';
type Identifier = { type: 'username' | 'email'; value: string };
/** An address a code proves: an email or a phone number (digits, an optional leading +). */
export type CodeIdentifier = { type: CodeChannel; value: string };
type Verification = { verificationId: string };

const experience = <T = undefined>(method: 'GET' | 'POST' | 'PUT', path: string, body?: unknown) =>
  request<T>(method, `/api/experience${path}`, body);
const connectorPath = (kind: ExternalKind, connectorId: string) =>
  `/verification/${kind}/${encodeURIComponent(connectorId)}`;

export const api = {
  /** Starts (or restarts) the interaction, with the captcha widget's token while the captcha policy is on. */
  start: (interactionEvent: InteractionEvent, captchaToken?: string) =>
    experience('PUT', '', { interactionEvent, captchaToken }),
  changeEvent: (interactionEvent: InteractionEvent) => experience('PUT', '/interaction-event', { interactionEvent }),
  ssoConnectorsFor: (email: string) =>
    experience<{ connectorIds: string[] }>('GET', `/sso-connectors?email=${encodeURIComponent(email)}`),

  verifyPassword: (identifier: Identifier, password: string) =>
    experience<Verification>('POST', '/verification/password', { identifier, password }),
  newPasswordIdentity: (identifier: Identifier, password: string) =>
    experience<Verification>('POST', '/verification/new-password-identity', { identifier, password }),
  sendCode: (identifier: CodeIdentifier, interactionEvent: InteractionEvent) =>
    experience<Verification>('POST', '/verification/verification-code', { identifier, interactionEvent }),
  verifyCode: (identifier: CodeIdentifier, verificationId: string, code: string) =>
    experience<Verification>('POST', '/verification/verification-code/verify', { identifier, verificationId, code }),
  authorizationUri: (kind: ExternalKind, connectorId: string, state: string, redirectUri: string) =>
    experience<{ authorizationUri: string; verificationId: string }>(
      'POST',
      `${connectorPath(kind, connectorId)}/authorization-uri`,
      { state, redirectUri },
    ),
  verifyExternal: (
    kind: ExternalKind,
    connectorId: string,
    connectorData: Record<string, string>,
    verificationId: string,
  ) =>
    experience<Verification>('POST', `${connectorPath(kind, connectorId)}/verify`, { connectorData, verificationId }),

  /** Who signs in: the user a verification proved (`linkSocialIdentity`: link an external identity to the account with its email). */
  identify: (verificationId: string, linkSocialIdentity?: true) =>
    experience('POST', '/identification', { verificationId, linkSocialIdentity }),
  newPassword: (password: string) => experience('PUT', '/profile/password', { password }),
  /** Fills what the account lacks (`user.missing_profile`); kept at the next submit. */
  addProfile: (
    addition: { type: 'username' | 'password'; value: string } | { type: CodeChannel; verificationId: string },
  ) => experience('POST', '/profile', addition),
  /** Finishes: where the provider continues (a sign-in or registration), or nothing (a password reset). */
  submit: () => experience<{ redirectTo: string } | undefined>('POST', '/submit'),

  totpSecret: () =>
    experience<{ verificationId: string; secret: string; secretQrCode: string }>('POST', '/verification/totp/secret'),
  /** A code of the user's app; with `verificationId`, of the secret being set up. */
  verifyTotp: (code: string, verificationId?: string) =>
    experience('POST', '/verification/totp/verify', { code, verificationId }),
  verifyBackupCode: (code: string) => experience('POST', '/verification/backup-code/verify', { code }),
  sendMfaCode: (identifierType: CodeChannel) =>
    experience<Verification>('POST', '/verification/mfa-verification-code', { identifierType }),
  verifyMfaCode: (identifierType: CodeChannel, verificationId: string, code: string) =>
    experience('POST', '/verification/mfa-verification-code/verify', { identifierType, verificationId, code }),
  backupCodes: () =>
    experience<{ verificationId: string; codes: string[] }>('POST', '/verification/backup-code/generate'),
  /** Passkeys: the options for the browser's WebAuthn call, then its answer (Logto's `payload`, `type: "WebAuthn"`). */
  passkeyRegistration: () =>
    experience<{ verificationId: string; registrationOptions: PublicKeyCredentialCreationOptionsJSON }>(
      'POST',
      '/verification/web-authn/registration',
    ),
  verifyPasskeyRegistration: (verificationId: string, answer: RegistrationResponseJSON) =>
    experience<Verification>('POST', '/verification/web-authn/registration/verify', {
      verificationId,
      payload: { ...answer, type: 'WebAuthn' },
    }),
  passkeyAuthentication: () =>
    experience<{ verificationId: string; authenticationOptions: PublicKeyCredentialRequestOptionsJSON }>(
      'POST',
      '/verification/web-authn/authentication',
    ),
  verifyPasskeyAuthentication: (verificationId: string, answer: AuthenticationResponseJSON) =>
    experience<Verification>('POST', '/verification/web-authn/authentication/verify', {
      verificationId,
      payload: { ...answer, type: 'WebAuthn' },
    }),
  /** Passkey sign-in (Logto's): options offering any passkey of this site, then the answer, which names the account. */
  passkeySignInOptions: () =>
    experience<{ authenticationOptions: PublicKeyCredentialRequestOptionsJSON }>(
      'POST',
      '/preflight/sign-in-passkey/authentication',
    ),
  verifyPasskeySignIn: (answer: AuthenticationResponseJSON) =>
    experience<Verification>('POST', '/verification/sign-in-passkey/authentication/verify', {
      payload: { ...answer, type: 'WebAuthn' },
    }),
  addMfa: (type: MfaFactor, verificationId: string) => experience('POST', '/profile/mfa', { type, verificationId }),
  skipMfa: () => experience('POST', '/profile/mfa/mfa-skipped'),
  skipMfaSuggestion: () => experience('POST', '/profile/mfa/mfa-suggestion-skipped'),

  /** The public sign-in settings (Logto's `/.well-known/sign-in-exp`): the social connectors to offer, the branding. */
  settings: () => request<PublicSettings>('GET', '/api/.well-known/sign-in-exp'),

  /** The application this sign-in is for. */
  application: () => request<PublicApplication>('GET', '/api/interaction/application'),
  /** What the application asks the signed-in person to consent to (Logto's consent API). */
  consentInfo: () => request<ConsentInfo>('GET', '/api/interaction/consent'),
  consent: () => request<{ redirectTo: string }>('POST', '/api/interaction/consent', {}),
  /** Cancels the sign-in: the application receives `access_denied`. */
  deny: () => request<{ redirectTo: string }>('DELETE', '/api/interaction'),
};

/** The settings the pages read, with the social connectors to offer (a connector's name by language). */
export type PublicSettings = Pick<
  SignInExperience,
  'branding' | 'color' | 'passkeySignIn' | 'termsOfUseUrl' | 'privacyPolicyUrl'
> & {
  socialConnectors: Array<Pick<Connector, 'id' | 'target'> & { name: Partial<Connector['name']> }>;
  /** The captcha widget to show, while the captcha policy is on. */
  captchaConfig?: PublicCaptchaConfig;
};

export type PublicApplication = {
  id: string;
  name: string;
  branding: { logoUrl?: string };
  /** A client named by a URL: the URL's host, shown beside its name. */
  clientIdHost?: string;
};

export type ConsentInfo = {
  application: PublicApplication;
  user: Pick<User, 'name' | 'username' | 'primaryEmail' | 'primaryPhone'>;
  /** The person's organizations the application would see, when it asks for them (Logto's organizations scope). */
  organizations: Array<Pick<Organization, 'id' | 'name'>>;
  missingOIDCScope: string[];
  missingResourceScopes: Array<{
    resource: Pick<Resource, 'name'>;
    scopes: Array<Pick<Scope, 'name' | 'description'>>;
  }>;
};
