import { createApplication, createResource } from '../support/fixtures.ts';
import type { TestService } from '../support/service.ts';
import { Browser } from '../experience/browser.ts';

const redirectUri = 'http://frontend.test/callback';

/**
 * The delegation setting of the specification: API A and API B as resources, B's permissions held
 * by a user through a role, a front end that signs the user in for API A, and API A's backend
 * application allowed to exchange.
 */
export async function delegationSetup(service: TestService) {
  const apiA = await createResource(service, ['read:a']);
  const apiB = await createResource(service, ['read:b', 'write:b', 'delete:b'], 900);
  const role = (
    await service.api.post('roles', {
      json: { name: `b-user-${Date.now()}-${Math.random()}`, description: 'reads and writes B', scopeIds: [apiB.scopeIds['read:b'], apiB.scopeIds['write:b'], apiA.scopeIds['read:a']] },
    })
  ).body;
  const username = `user_${Math.random().toString(36).slice(2, 10)}`;
  const password = 'Sturdy-Tulip-7';
  const user = (await service.api.post('users', { json: { username, password } })).body;
  await service.api.post(`users/${user.id}/roles`, { json: { roleIds: [role.id] } });
  const frontend = await createApplication(service, 'SPA', { oidcClientMetadata: { redirectUris: [redirectUri], postLogoutRedirectUris: [] } });
  const backend = await createApplication(service, 'Traditional', {
    oidcClientMetadata: { redirectUris: ['http://api-a.test/callback'], postLogoutRedirectUris: [] },
    customClientMetadata: { allowTokenExchange: true },
  });
  return { apiA, apiB, role, user: { ...user, username, password }, frontend, backend };
}

/** The user signs in at the front end, which gets an access token for API A (or an opaque one). */
export async function userAccessToken(
  service: TestService,
  frontendId: string,
  user: { username: string; password: string },
  resource?: string,
): Promise<string> {
  const browser = new Browser(service);
  const scope = resource ? 'openid read:a' : 'openid';
  const { verifier } = await browser.authorize(frontendId, redirectUri, { scope, ...(resource && { resource }) });
  await browser.call('put', 'api/experience', { interactionEvent: 'SignIn' });
  const password = await browser.call('post', 'api/experience/verification/password', {
    identifier: { type: 'username', value: user.username },
    password: user.password,
  });
  await browser.call('post', 'api/experience/identification', { verificationId: password.body.verificationId });
  const done = await browser.call('post', 'api/experience/submit');
  const landed = await browser.followToApplication(done.body.redirectTo);
  const tokens = await service.http.post('oidc/token', {
    form: {
      grant_type: 'authorization_code',
      code: landed.searchParams.get('code')!,
      code_verifier: verifier,
      client_id: frontendId,
      redirect_uri: redirectUri,
      ...(resource && { resource }),
    },
  });
  if (tokens.statusCode !== 200) {
    throw new Error(`sign-in failed: ${JSON.stringify(tokens.body)}`);
  }
  return tokens.body.access_token;
}

export const tokenExchange = 'urn:ietf:params:oauth:grant-type:token-exchange';
export const accessTokenType = 'urn:ietf:params:oauth:token-type:access_token';
