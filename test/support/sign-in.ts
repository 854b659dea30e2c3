import { Browser } from '../experience/browser.ts';
import type { TestService } from './service.ts';

/**
 * The experience API's password sign-in in a browser whose authorization request is under way:
 * the submission's answer (`redirectTo`); throws unless it is 200.
 */
export async function submitPasswordSignIn(browser: Browser, user: { username: string; password: string }) {
  await browser.call('put', 'api/experience', { interactionEvent: 'SignIn' });
  const password = await browser.call('post', 'api/experience/verification/password', {
    identifier: { type: 'username', value: user.username },
    password: user.password,
  });
  await browser.call('post', 'api/experience/identification', { verificationId: password.body.verificationId });
  const done = await browser.call('post', 'api/experience/submit');
  if (done.statusCode !== 200) {
    throw new Error(`sign-in failed: ${done.statusCode} ${JSON.stringify(done.body)}`);
  }
  return done;
}

export type SignedInTokens = { access_token: string; id_token: string; [key: string]: unknown };

/**
 * A person signs in with username and password at an application (code + PKCE, as a browser
 * would; they accept the consent page when one is shown), optionally for an API resource; returns the token response. Unlike
 * `Browser.followToApplication`, it stops at the redirect URI even when that is on the service's
 * own origin (the console's `/console/callback`).
 */
export async function signIn(
  service: TestService,
  application: { clientId: string; redirectUri: string; clientSecret?: string },
  user: { username: string; password: string },
  request: { scope: string; resource?: string; prompt?: 'consent' },
): Promise<SignedInTokens> {
  const browser = new Browser(service);
  const { verifier } = await browser.authorize(application.clientId, application.redirectUri, {
    scope: request.scope,
    ...(request.resource && { resource: request.resource }),
    ...(request.prompt && { prompt: request.prompt }),
  });
  const done = await submitPasswordSignIn(browser, user);
  let next = new URL(String(done.body.redirectTo), service.url);
  for (let hops = 0; !next.href.startsWith(application.redirectUri); hops++) {
    if (hops === 10) {
      throw new Error('too many redirects');
    }
    if (next.pathname === '/consent') {
      const consented = await browser.call('post', 'api/interaction/consent', {});
      next = new URL(String(consented.body.redirectTo), service.url);
      continue;
    }
    const path = next.href.replace(service.config.endpoint, service.url).replace(`${service.url}/`, '');
    const response = await browser.client.get(path, { responseType: 'text' });
    if (!response.headers.location) {
      throw new Error(`no redirect from ${next.href}: ${response.statusCode}`);
    }
    next = new URL(response.headers.location, next);
  }
  const tokens = await service.http.post('oidc/token', {
    // A confidential application authenticates with its secret (client_secret_basic).
    ...(application.clientSecret && {
      headers: {
        authorization: `Basic ${Buffer.from(`${application.clientId}:${application.clientSecret}`).toString('base64')}`,
      },
    }),
    form: {
      grant_type: 'authorization_code',
      code: next.searchParams.get('code') ?? '',
      code_verifier: verifier,
      client_id: application.clientId,
      redirect_uri: application.redirectUri,
      ...(request.resource && { resource: request.resource }),
    },
  });
  if (tokens.statusCode !== 200) {
    throw new Error(`code exchange failed: ${JSON.stringify(tokens.body)}`);
  }
  return tokens.body as SignedInTokens;
}

/** The admin console's sign-in: a management API token for the person (carrying `all` when they are an administrator). */
export const consoleSignIn = (service: TestService, user: { username: string; password: string }) =>
  signIn(service, { clientId: 'console', redirectUri: `${service.config.endpoint}/console/callback` }, user, {
    scope: 'openid profile all',
    resource: service.config.managementApiResource,
  });
