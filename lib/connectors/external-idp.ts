import { got, HTTPError, RequestError as GotRequestError } from 'got';
import { errors as joseErrors } from 'jose';
import * as oidc from 'openid-client';
import { z } from 'zod';

import { RequestError } from '../http/errors.ts';
import { type IdTokenChecks, verifyIdToken } from './id-token.ts';

/** An external sign-in under way: what the callback must match (RFC 6749 state, OIDC nonce, PKCE). */
export const externalAuthorizationSchema = z.object({
  state: z.string(),
  nonce: z.string(),
  codeVerifier: z.string(),
  redirectUri: z.string(),
});
export type ExternalAuthorization = z.output<typeof externalAuthorizationSchema>;

/** Who an external identity provider says the user is. */
export const externalUserInfoSchema = z.object({
  id: z.string(),
  email: z.string().optional(),
  emailVerified: z.boolean().optional(),
  phone: z.string().optional(),
  name: z.string().optional(),
  avatar: z.string().optional(),
  rawData: z.record(z.string(), z.unknown()),
});
export type ExternalUserInfo = z.output<typeof externalUserInfoSchema>;

/** Where and how to send a user to sign in elsewhere: an OpenID provider, or a plain OAuth 2.0 server. */
export type IdpSettings = {
  kind: 'oidc' | 'oauth2';
  /** OpenID Connect: the issuer (discovery at its well-known address unless endpoints are given). */
  issuer?: string;
  authorizationEndpoint?: string;
  tokenEndpoint?: string;
  userInfoEndpoint?: string;
  /** Where the ID token's signing keys are (with explicit endpoints, the token is checked against them). */
  jwksUri?: string;
  /** Explicit endpoints: further ID token checks (Logto's `idTokenVerificationConfig`). */
  idToken?: Pick<IdTokenChecks, 'issuer' | 'algorithms' | 'clockTolerance' | 'maxTokenAge'>;
  /** Take `"true"` in `email_verified` as true. */
  acceptStringBooleans?: boolean;
  /** Extra parameters of the authorization request (Logto's `authRequestOptionalConfig`, `customConfig`). */
  authorizationParams?: Record<string, string>;
  clientId: string;
  clientSecret: string;
  scope: string;
  tokenEndpointAuthMethod: 'client_secret_post' | 'client_secret_basic';
  /** Take the provider's emails as verified even without `email_verified` (it checks them itself). */
  trustUnverifiedEmail: boolean;
  /** OAuth 2.0: which userinfo fields hold the id, email, phone, name and avatar. */
  profileMap?: Partial<Record<'id' | 'email' | 'phone' | 'name' | 'avatar', string>>;
};

const timeoutMs = 10_000;

/** Where a sign-in at another IdP failed: its settings, its discovery document, the callback, the token or userinfo request. */
export type IdpStage = 'configuration' | 'discovery' | 'callback' | 'token' | 'userinfo';

/**
 * A sign-in at another IdP that failed there. The user reads `message`, a plain sentence; what the
 * IdP or the network said stays in `cause` and `idpError` (its OAuth error code) for the operator's
 * log line (lib/experience/external/external-sign-in-routes.ts), since it can name internal hosts.
 */
export class IdpFailure extends RequestError<'connector.invalid_configuration' | 'connector.authorization_failed'> {
  readonly stage: IdpStage;
  readonly idpError?: string;

  constructor(
    stage: IdpStage,
    code: 'connector.invalid_configuration' | 'connector.authorization_failed',
    message: string,
    cause: unknown,
    idpError?: string,
  ) {
    super(code, { reason: message }, { cause });
    this.stage = stage;
    this.idpError = idpError;
  }
}

const notConfirmed = 'The identity provider did not confirm the sign-in. Try again, or sign in another way.';
const notAvailable =
  'Signing in with this provider is not available right now. Try again later, or sign in another way.';

/** No answer came back (DNS, connection, TLS, timeout), as opposed to an answer that refused. */
function isUnreachable(error: unknown): boolean {
  if (error instanceof GotRequestError) {
    return error.response === undefined;
  }
  if (error instanceof joseErrors.JWKSTimeout) {
    return true;
  }
  return error instanceof TypeError && error.message === 'fetch failed';
}

/** The OAuth error code an IdP answered with, as openid-client or got report it. */
function idpErrorOf(error: unknown): string | undefined {
  if (error instanceof oidc.ResponseBodyError) {
    return error.error;
  }
  if (error instanceof HTTPError) {
    const body: unknown = error.response.body;
    const code =
      typeof body === 'string' && body.startsWith('{') ? (JSON.parse(body) as { error?: unknown }).error : undefined;
    return typeof code === 'string' ? code : undefined;
  }
  return undefined;
}

/**
 * The callback is this sign-in's answer: no error from the IdP (the user cancelled, or the IdP would
 * not let them in), the state that was sent, a code. Checked before any request to the IdP.
 */
function assertCallbackMatches(callback: URL, authorization: ExternalAuthorization): string {
  const query = callback.searchParams;
  const refusal = query.get('error');
  if (refusal) {
    throw new IdpFailure(
      'callback',
      'connector.authorization_failed',
      'The sign-in was cancelled or refused at the identity provider.',
      new Error(`the identity provider sent the browser back with error=${refusal}`),
      refusal,
    );
  }
  const code = query.get('code');
  if (query.get('state') !== authorization.state || !code) {
    throw new IdpFailure(
      'callback',
      'connector.authorization_failed',
      'This sign-in does not match the one that was started. Start again.',
      new Error('the callback does not match the sign-in that was started (state or code)'),
    );
  }
  return code;
}

const failedAt = (stage: 'token' | 'userinfo', error: unknown) =>
  new IdpFailure(
    stage,
    'connector.authorization_failed',
    isUnreachable(error) ? notAvailable : notConfirmed,
    error,
    idpErrorOf(error),
  );

/** An endpoint the settings must give for this kind of IdP (the connector schemas require it; checked again here). */
function endpointOf(
  settings: IdpSettings,
  name: 'authorizationEndpoint' | 'tokenEndpoint' | 'userInfoEndpoint',
): string {
  const endpoint = settings[name];
  if (!endpoint) {
    throw new IdpFailure(
      'configuration',
      'connector.invalid_configuration',
      'Signing in with this provider is not available yet. Sign in another way.',
      new Error(`the connector's settings have no ${name}`),
    );
  }
  return endpoint;
}

// Plain http only to this machine (a development IdP); anything else must be https.
const isLoopbackHttp = (address: string | undefined) => {
  if (!address) {
    return false;
  }
  const url = new URL(address);
  return url.protocol === 'http:' && ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
};

// Discovery documents are fetched once per settings, not once per sign-in.
const configurations = new Map<string, Promise<oidc.Configuration>>();

function configurationOf(settings: IdpSettings): Promise<oidc.Configuration> {
  const key = JSON.stringify(settings);
  let configuration = configurations.get(key);
  if (!configuration) {
    if (configurations.size >= 100) {
      configurations.clear();
    }
    configuration = loadConfiguration(settings);
    configurations.set(key, configuration);
    // A failed discovery is tried again at the next sign-in.
    configuration.catch(() => configurations.delete(key));
  }
  return configuration;
}

async function loadConfiguration(settings: IdpSettings): Promise<oidc.Configuration> {
  const auth =
    settings.tokenEndpointAuthMethod === 'client_secret_basic'
      ? oidc.ClientSecretBasic(settings.clientSecret)
      : oidc.ClientSecretPost(settings.clientSecret);
  const insecure = [settings.issuer, settings.authorizationEndpoint, settings.tokenEndpoint].some(isLoopbackHttp);
  const issuer = settings.issuer ?? new URL(endpointOf(settings, 'authorizationEndpoint')).origin;
  let configuration: oidc.Configuration;
  if (settings.kind === 'oidc' && !settings.authorizationEndpoint) {
    try {
      configuration = await oidc.discovery(new URL(issuer), settings.clientId, undefined, auth, {
        timeout: timeoutMs / 1000,
        // eslint-disable-next-line @typescript-eslint/no-deprecated -- deprecated only as a warning sign; used for loopback http IdPs alone
        execute: insecure ? [oidc.allowInsecureRequests] : [],
      });
    } catch (error) {
      throw new IdpFailure('discovery', 'connector.invalid_configuration', notAvailable, error);
    }
  } else {
    configuration = new oidc.Configuration(
      {
        issuer,
        authorization_endpoint: settings.authorizationEndpoint,
        token_endpoint: settings.tokenEndpoint,
        userinfo_endpoint: settings.userInfoEndpoint,
        jwks_uri: settings.jwksUri,
      },
      settings.clientId,
      undefined,
      auth,
    );
    if (insecure) {
      // eslint-disable-next-line @typescript-eslint/no-deprecated -- deprecated only as a warning sign; used for loopback http IdPs alone
      oidc.allowInsecureRequests(configuration);
    }
  }
  configuration.timeout = timeoutMs / 1000;
  return configuration;
}

/** Where to send the browser, and what its return must match (state, nonce, PKCE verifier). */
export async function startAuthorization(
  settings: IdpSettings,
  { state, redirectUri }: { state: string; redirectUri: string },
): Promise<{ authorizationUri: string; authorization: ExternalAuthorization }> {
  const configuration = await configurationOf(settings);
  const codeVerifier = oidc.randomPKCECodeVerifier();
  const nonce = oidc.randomNonce();
  const url = oidc.buildAuthorizationUrl(configuration, {
    // The connector's extra parameters first: the sign-in's own cannot be overridden (the schema refuses them too).
    ...settings.authorizationParams,
    response_type: 'code',
    redirect_uri: redirectUri,
    scope: settings.scope,
    state,
    code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: 'S256',
    ...(settings.kind === 'oidc' && { nonce }),
  });
  return { authorizationUri: url.href, authorization: { state, nonce, codeVerifier, redirectUri } };
}

const text = (value: unknown) => (typeof value === 'string' && value.length > 0 ? value : undefined);

/** Who an OpenID provider says the user is: its ID token's claims, with its userinfo's where fetched. */
function oidcUserInfo(settings: IdpSettings, claims: Record<string, unknown>): ExternalUserInfo {
  const verified =
    claims.email_verified === true || (settings.acceptStringBooleans && claims.email_verified === 'true');
  return {
    id: String(claims.sub),
    email: text(claims.email),
    emailVerified: verified || settings.trustUnverifiedEmail,
    phone: text(claims.phone_number),
    name: text(claims.name),
    avatar: text(claims.picture),
    rawData: claims,
  };
}

/**
 * The browser came back with `connectorData` (the callback's query: code and state, or an error):
 * redeems the code and returns who the user is there, with the issuer that namespaces the id.
 */
export async function completeAuthorization(
  settings: IdpSettings,
  authorization: ExternalAuthorization,
  connectorData: Record<string, unknown>,
): Promise<{ issuer: string; userInfo: ExternalUserInfo }> {
  const callback = new URL(authorization.redirectUri);
  for (const [key, value] of Object.entries(connectorData)) {
    if (key !== 'redirectUri' && typeof value === 'string') {
      callback.searchParams.set(key, value);
    }
  }
  const code = assertCallbackMatches(callback, authorization);
  if (settings.kind === 'oauth2') {
    const issuer = new URL(endpointOf(settings, 'authorizationEndpoint')).origin;
    return { issuer, userInfo: await oauth2UserInfo(settings, authorization, code) };
  }
  if (settings.authorizationEndpoint) {
    return explicitOidcSignIn(settings, authorization, code);
  }
  const configuration = await configurationOf(settings);
  let tokens: Awaited<ReturnType<typeof oidc.authorizationCodeGrant>>;
  try {
    tokens = await oidc.authorizationCodeGrant(configuration, callback, {
      pkceCodeVerifier: authorization.codeVerifier,
      expectedState: authorization.state,
      expectedNonce: authorization.nonce,
      idTokenExpected: true,
    });
  } catch (error) {
    throw failedAt('token', error);
  }
  let claims: Record<string, unknown> = { ...tokens.claims() };
  if (configuration.serverMetadata().userinfo_endpoint) {
    try {
      claims = { ...claims, ...(await oidc.fetchUserInfo(configuration, tokens.access_token, String(claims.sub))) };
    } catch (error) {
      throw failedAt('userinfo', error);
    }
  }
  return { issuer: configuration.serverMetadata().issuer, userInfo: oidcUserInfo(settings, claims) };
}

/** The code redeemed at the token endpoint (PKCE, the connector's client authentication): the token response. */
async function redeemCode(
  settings: IdpSettings,
  authorization: ExternalAuthorization,
  code: string,
): Promise<{ access_token?: string; id_token?: string }> {
  const form: Record<string, string> = {
    grant_type: 'authorization_code',
    code,
    redirect_uri: authorization.redirectUri,
    code_verifier: authorization.codeVerifier,
    client_id: settings.clientId,
  };
  const basic = settings.tokenEndpointAuthMethod === 'client_secret_basic';
  if (!basic) {
    form.client_secret = settings.clientSecret;
  }
  const tokenEndpoint = endpointOf(settings, 'tokenEndpoint');
  const credentials = `${encodeURIComponent(settings.clientId)}:${encodeURIComponent(settings.clientSecret)}`;
  try {
    return await got
      .post(tokenEndpoint, {
        form,
        headers: basic ? { authorization: `Basic ${Buffer.from(credentials).toString('base64')}` } : {},
        timeout: { request: timeoutMs },
        followRedirect: false,
      })
      .json<{ access_token?: string; id_token?: string }>();
  } catch (error) {
    throw failedAt('token', error);
  }
}

const fetchProfile = (endpoint: string, accessToken: string) =>
  got
    .get(endpoint, {
      headers: { authorization: `Bearer ${accessToken}` },
      timeout: { request: timeoutMs },
      followRedirect: false,
    })
    .json<Record<string, unknown>>();

/**
 * An OpenID provider configured by its endpoints (Logto's shape): the code buys an ID token, checked
 * against the configured keys (`jwksUri`) and options; then the userinfo endpoint, where there is one.
 */
async function explicitOidcSignIn(
  settings: IdpSettings,
  authorization: ExternalAuthorization,
  code: string,
): Promise<{ issuer: string; userInfo: ExternalUserInfo }> {
  const tokens = await redeemCode(settings, authorization, code);
  let claims: Record<string, unknown>;
  try {
    if (!tokens.id_token || !settings.jwksUri) {
      throw new Error(tokens.id_token ? 'the connector names no jwksUri' : 'no id_token in the token response');
    }
    claims = await verifyIdToken(tokens.id_token, {
      ...settings.idToken,
      issuer: settings.idToken?.issuer ?? settings.issuer,
      jwksUri: settings.jwksUri,
      clientId: settings.clientId,
      nonce: authorization.nonce,
    });
  } catch (error) {
    throw failedAt('token', error);
  }
  if (settings.userInfoEndpoint && tokens.access_token) {
    try {
      const profile = await fetchProfile(settings.userInfoEndpoint, tokens.access_token);
      // OpenID Connect Core 5.3.2: a userinfo answer about another subject is not used.
      if (profile.sub !== claims.sub) {
        throw new Error("the userinfo `sub` is not the ID token's");
      }
      claims = { ...claims, ...profile };
    } catch (error) {
      throw failedAt('userinfo', error);
    }
  }
  return { issuer: String(claims.iss), userInfo: oidcUserInfo(settings, claims) };
}

/** A plain OAuth 2.0 server has no ID token: the code buys an access token, which buys the profile. */
async function oauth2UserInfo(
  settings: IdpSettings,
  authorization: ExternalAuthorization,
  code: string,
): Promise<ExternalUserInfo> {
  const userInfoEndpoint = endpointOf(settings, 'userInfoEndpoint');
  const token = await redeemCode(settings, authorization, code);
  if (!token.access_token) {
    throw failedAt('token', new Error('no access_token in the token response'));
  }
  try {
    const profile = await fetchProfile(userInfoEndpoint, token.access_token);
    const map = { id: 'id', email: 'email', phone: 'phone', name: 'name', avatar: 'avatar', ...settings.profileMap };
    const id = profile[map.id];
    if (typeof id !== 'string' && typeof id !== 'number') {
      throw new Error(`the profile has no \`${map.id}\``);
    }
    return {
      id: String(id),
      email: text(profile[map.email]),
      // A plain OAuth 2.0 server makes no statement about the email.
      emailVerified: settings.trustUnverifiedEmail,
      phone: text(profile[map.phone]),
      name: text(profile[map.name]),
      avatar: text(profile[map.avatar]),
      rawData: profile,
    };
  } catch (error) {
    throw failedAt('userinfo', error);
  }
}
