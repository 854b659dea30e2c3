import { t } from './i18n/index.ts';

/**
 * Signing the administrator in through the service's own OIDC: authorization code + PKCE as the
 * first-party "console" application, asking for the management API (resource indicator) with its
 * `all` scope. The token lives in sessionStorage: this tab only, gone when the tab closes.
 */
export type ConsoleConfig = {
  clientId: string;
  issuer: string;
  redirectUri: string;
  postLogoutRedirectUri: string;
  managementApiResource: string;
  hasAdministrator: boolean;
  /** Whether this browser may create the first administrator: as it is, with the setup token, or not at all. */
  firstRun: 'local' | 'setup-token' | 'closed';
};

type Session = { accessToken: string; idToken: string; expiresAt: number; scope: string };
type Pending = { verifier: string; state: string; returnTo: string };

const sessionKey = 'console.session';
const pendingKey = 'console.pending';

export async function loadConfig(): Promise<ConsoleConfig> {
  const response = await fetch('/api/console/config');
  if (!response.ok) {
    throw new Error(t('shell.configFailed', { status: response.status }));
  }
  return (await response.json()) as ConsoleConfig;
}

const base64url = (bytes: Uint8Array) =>
  btoa(String.fromCharCode(...bytes))
    .replaceAll('+', '-')
    .replaceAll('/', '_')
    .replace(/=+$/, '');
const randomString = () => base64url(crypto.getRandomValues(new Uint8Array(32)));

export function currentSession(): Session | undefined {
  const stored = sessionStorage.getItem(sessionKey);
  const session = stored ? (JSON.parse(stored) as Session) : undefined;
  // A token about to expire is as good as none: sign in again rather than fail mid-edit.
  return session && session.expiresAt > Date.now() + 30_000 ? session : undefined;
}

export const isAdministrator = (session: Session) => session.scope.split(' ').includes('all');

/** The authorization request, its PKCE verifier and state kept for the way back (`completeSignIn`). */
async function authorizationUrl(config: ConsoleConfig, returnTo: string): Promise<string> {
  const pending: Pending = { verifier: randomString(), state: randomString(), returnTo };
  sessionStorage.setItem(pendingKey, JSON.stringify(pending));
  const challenge = base64url(
    new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(pending.verifier))),
  );
  const query = new URLSearchParams({
    client_id: config.clientId,
    redirect_uri: config.redirectUri,
    response_type: 'code',
    scope: 'openid profile all',
    resource: config.managementApiResource,
    state: pending.state,
    code_challenge: challenge,
    code_challenge_method: 'S256',
  });
  return `${config.issuer}/auth?${query}`;
}

export async function signIn(config: ConsoleConfig, returnTo: string): Promise<void> {
  location.assign(await authorizationUrl(config, returnTo));
}

/** A call of the Experience API (the hosted sign-in pages' API, on this origin), its answer or a thrown error. */
async function experience(method: 'PUT' | 'POST', path: string, body: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(`/api/experience${path}`, {
    method,
    credentials: 'same-origin',
    headers: { accept: 'application/json', 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!response.ok) {
    throw new Error(`the sign-in answered ${response.status}`);
  }
  const text = await response.text();
  return text ? (JSON.parse(text) as Record<string, unknown>) : {};
}

/**
 * Right after the first run: signs the new administrator in with the username and password just
 * typed, as the hosted sign-in page would (the same authorization request, then the Experience API
 * on the interaction it opened), so that nobody types them twice. Where that cannot finish (the
 * sign-in experience asks for more, such as a second factor), the sign-in page takes over.
 */
export async function signInAs(
  config: ConsoleConfig,
  returnTo: string,
  { username, password }: { username: string; password: string },
): Promise<void> {
  const url = await authorizationUrl(config, returnTo);
  try {
    // Followed to the sign-in page: the provider has set the interaction's cookie on the way.
    const started = await fetch(url, { credentials: 'same-origin' });
    if (new URL(started.url).pathname !== '/sign-in') {
      throw new Error('the authorization request did not ask for a sign-in');
    }
    await experience('PUT', '', { interactionEvent: 'SignIn' });
    const { verificationId } = await experience('POST', '/verification/password', {
      identifier: { type: 'username', value: username },
      password,
    });
    await experience('POST', '/identification', { verificationId });
    const { redirectTo } = await experience('POST', '/submit', {});
    location.assign(typeof redirectTo === 'string' ? redirectTo : url);
  } catch {
    location.assign(url);
  }
}

/** The redirect back: checks the state, swaps the code for tokens; returns where to go next. */
export async function completeSignIn(config: ConsoleConfig, url: URL): Promise<string> {
  const pending = JSON.parse(sessionStorage.getItem(pendingKey) ?? 'null') as Pending | null;
  sessionStorage.removeItem(pendingKey);
  const error = url.searchParams.get('error');
  if (error) {
    throw new Error(url.searchParams.get('error_description') ?? error);
  }
  const code = url.searchParams.get('code');
  if (!pending || !code || url.searchParams.get('state') !== pending.state) {
    throw new Error(t('shell.foreignResponse'));
  }
  const response = await fetch(`${config.issuer}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      code_verifier: pending.verifier,
      client_id: config.clientId,
      redirect_uri: config.redirectUri,
      resource: config.managementApiResource,
    }),
  });
  const body = (await response.json()) as Record<string, unknown>;
  const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
  if (!response.ok) {
    throw new Error(
      text(body.error_description) ?? text(body.error) ?? t('shell.tokenFailed', { status: response.status }),
    );
  }
  const session: Session = {
    accessToken: String(body.access_token),
    idToken: String(body.id_token),
    expiresAt: Date.now() + Number(body.expires_in) * 1000,
    scope: text(body.scope) ?? '',
  };
  sessionStorage.setItem(sessionKey, JSON.stringify(session));
  return pending.returnTo;
}

export function signOut(config: ConsoleConfig): void {
  const session = currentSession();
  sessionStorage.removeItem(sessionKey);
  if (session) {
    // The token would work until it expires: revoke it (RFC 7009). keepalive lets it outlive the page.
    void fetch(`${config.issuer}/token/revocation`, {
      method: 'POST',
      keepalive: true,
      body: new URLSearchParams({ token: session.accessToken, client_id: config.clientId }),
    }).catch(() => undefined);
  }
  const query = new URLSearchParams({
    client_id: config.clientId,
    post_logout_redirect_uri: config.postLogoutRedirectUri,
  });
  if (session) {
    query.set('id_token_hint', session.idToken);
  }
  location.assign(`${config.issuer}/session/end?${query}`);
}

/** Forget the token (the API refused it): the next screen offers to sign in again. */
export const dropSession = () => sessionStorage.removeItem(sessionKey);
