import { randomBytes } from 'node:crypto';
import { expect } from 'chai';

import { Browser } from '../experience/browser.ts';
import { createApplication } from './fixtures.ts';
import { startService, type TestService } from './service.ts';
import { unique } from './values.ts';

/**
 * An external identity provider for social and enterprise sign-in tests: a second instance of this
 * service, on its own port and database, with a Traditional (confidential) application whose
 * redirect URI is where the service under test asks the IdP to send the browser back.
 */
export type Idp = {
  service: TestService;
  /** The OpenID issuer (discovery at `${issuer}/.well-known/openid-configuration`). */
  issuer: string;
  client: { id: string; secret: string };
  stop(): Promise<void>;
};

export type IdpUser = { id: string; username: string; password: string; email: string; name: string };

const password = 'Quartz-Meadow-58';

export async function startIdp(redirectUris: string[]): Promise<Idp> {
  const service = await startService();
  const application = await createApplication(service, 'Traditional', {
    oidcClientMetadata: { redirectUris, postLogoutRedirectUris: [] },
  });
  expect(application.secret, 'a Traditional application has a secret').to.be.a('string');
  return {
    service,
    issuer: `${service.config.endpoint}/oidc`,
    client: { id: application.id, secret: application.secret },
    stop: () => service.stop(),
  };
}

/** A user of the IdP; created by the management API with `primaryEmail`, their email counts as verified there. */
export async function createIdpUser(idp: Idp, email: string): Promise<IdpUser> {
  const username = unique('idp');
  const name = `Robin Example ${username}`;
  const created = await idp.service.api.post('users', { json: { username, password, primaryEmail: email, name } });
  expect(created.statusCode, JSON.stringify(created.body)).to.equal(200);
  return { id: created.body.id, username, password, email, name };
}

/**
 * The browser's trip through the IdP: opens `authorizationUri` there, signs `user` in through the
 * IdP's own Experience API, and follows its redirects until they leave the IdP. Returns that URL:
 * the service's callback with `code` and `state`.
 */
export async function signInAtIdp(idp: Idp, authorizationUri: string, user: IdpUser): Promise<URL> {
  const uri = new URL(authorizationUri);
  expect(uri.origin, 'the authorization URI points at the IdP').to.equal(new URL(idp.service.url).origin);
  const browser = new Browser(idp.service);
  const opened = await browser.client.get(`${uri.pathname.slice(1)}${uri.search}`, { responseType: 'text' });
  expect(opened.statusCode, opened.body.slice(0, 300)).to.equal(303);
  expect(opened.headers.location).to.equal('/sign-in');
  expect((await browser.call('put', 'api/experience', { interactionEvent: 'SignIn' })).statusCode).to.equal(204);
  const verification = await browser.call('post', 'api/experience/verification/password', {
    identifier: { type: 'username', value: user.username },
    password: user.password,
  });
  expect(verification.statusCode, JSON.stringify(verification.body)).to.equal(200);
  const identified = await browser.call('post', 'api/experience/identification', {
    verificationId: verification.body.verificationId,
  });
  expect(identified.statusCode, JSON.stringify(identified.body)).to.equal(204);
  const submitted = await browser.call('post', 'api/experience/submit');
  expect(submitted.statusCode, JSON.stringify(submitted.body)).to.equal(200);
  return browser.followToApplication(submitted.body.redirectTo);
}

/** A fresh OAuth `state` as a sign-in page makes one. */
export const newState = (): string => randomBytes(12).toString('base64url');
