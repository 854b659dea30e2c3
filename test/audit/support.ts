import { expect } from 'chai';

import { Browser } from '../experience/browser.ts';
import type { TestService } from '../support/service.ts';

export { auditLog, waitForLog, type AuditEntry } from '../token-exchange/support.ts';

/**
 * A console administrator's management token, obtained as the console obtains it: the `console`
 * application, code + PKCE for the management API with `openid all`, the hosted sign-in by password.
 */
export async function administratorToken(
  service: TestService,
  user: { username: string; password: string },
): Promise<string> {
  const callback = `${service.config.endpoint}/console/callback`;
  const browser = new Browser(service);
  const { verifier } = await browser.authorize('console', callback, {
    scope: 'openid all',
    resource: service.config.managementApiResource,
  });
  expect((await browser.call('put', 'api/experience', { interactionEvent: 'SignIn' })).statusCode).to.equal(204);
  const password = await browser.call('post', 'api/experience/verification/password', {
    identifier: { type: 'username', value: user.username },
    password: user.password,
  });
  expect(password.statusCode, JSON.stringify(password.body)).to.equal(200);
  await browser.call('post', 'api/experience/identification', { verificationId: password.body.verificationId });
  const done = await browser.call('post', 'api/experience/submit');
  expect(done.statusCode, JSON.stringify(done.body)).to.equal(200);
  // The console's callback is on the service's own origin: follow until the browser lands there.
  let next = new URL(done.body.redirectTo, service.url);
  while (next.pathname !== '/console/callback') {
    const response = await browser.client.get(`${next.pathname.slice(1)}${next.search}`, { responseType: 'text' });
    next = new URL(String(response.headers.location), next);
  }
  const tokens = await service.http.post('oidc/token', {
    form: {
      grant_type: 'authorization_code',
      code: next.searchParams.get('code')!,
      code_verifier: verifier,
      client_id: 'console',
      redirect_uri: callback,
      resource: service.config.managementApiResource,
    },
  });
  expect(tokens.statusCode, JSON.stringify(tokens.body)).to.equal(200);
  return String(tokens.body.access_token);
}
