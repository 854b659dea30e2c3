import { createHash, randomBytes } from 'node:crypto';
import { got } from 'got';
import { CookieJar } from 'tough-cookie';

/**
 * A user signs in at `frontendId` through the authorization-code flow and the Experience API, as a
 * browser would; returns an access token for `resource` (the benchmark's subject token).
 */
export async function signInForToken(
  base: string,
  frontendId: string,
  redirectUri: string,
  user: { username: string; password: string },
  resource: string,
): Promise<string> {
  const cookieJar = new CookieJar();
  const client = got.extend({
    prefixUrl: base,
    cookieJar,
    followRedirect: false,
    throwHttpErrors: true,
    responseType: 'json',
  });
  const browser = got.extend({ cookieJar, followRedirect: false, throwHttpErrors: true });
  const verifier = randomBytes(32).toString('base64url');
  const query = new URLSearchParams({
    client_id: frontendId,
    redirect_uri: redirectUri,
    response_type: 'code',
    scope: 'openid',
    resource,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  });
  await client.get(`oidc/auth?${query}`, { responseType: 'text' });
  await client.put('api/experience', { json: { interactionEvent: 'SignIn' } });
  const { verificationId } = await client
    .post('api/experience/verification/password', {
      json: { identifier: { type: 'username', value: user.username }, password: user.password },
    })
    .json<{ verificationId: string }>();
  await client.post('api/experience/identification', { json: { verificationId } });
  let next = (await client.post('api/experience/submit').json<{ redirectTo: string }>()).redirectTo;
  while (!next.startsWith(redirectUri)) {
    const response = await browser.get(next);
    next = new URL(String(response.headers.location), next).href;
  }
  const code = new URL(next).searchParams.get('code');
  if (!code) {
    throw new Error(`the sign-in came back without a code: ${next}`);
  }
  const tokens = await got
    .post(`${base}/oidc/token`, {
      form: {
        grant_type: 'authorization_code',
        code,
        code_verifier: verifier,
        client_id: frontendId,
        redirect_uri: redirectUri,
        resource,
      },
    })
    .json<{ access_token: string }>();
  return tokens.access_token;
}
