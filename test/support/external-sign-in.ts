import { expect } from 'chai';

import type { Browser } from '../experience/browser.ts';
import { type SignInSetting, startSignInSetting } from '../experience/experience-helpers.ts';
import { expectStatus } from './expect.ts';
import { type Idp, type IdpUser, newState, signInAtIdp, startIdp } from './idp.ts';

/**
 * The setting of a social or enterprise SSO sign-in test: the service with its events and SPA, and
 * an outside IdP (a second instance of the service) that sends the browser back to `callback`.
 */
export type ExternalSignIn = SignInSetting & { idp: Idp; callback: string };

export async function startExternalSignIn(kind: 'social' | 'sso'): Promise<ExternalSignIn> {
  const setting = await startSignInSetting();
  const callback = `${setting.service.url}/callback/${kind}`;
  try {
    const idp = await startIdp([callback]);
    return {
      ...setting,
      idp,
      callback,
      stop: async () => {
        await setting.stop();
        await idp.stop();
      },
    };
  } catch (error) {
    await setting.stop();
    throw error;
  }
}

/**
 * The round trip through the IdP as `user`: the service hands out the IdP's authorization URI for a
 * fresh state, the browser signs in there and comes back to the callback with a code and that state,
 * and the service verifies the callback. Returns the authorization URI and the verified record's id.
 */
export async function verifyAtIdp(
  { idp, callback }: ExternalSignIn,
  browser: Browser,
  connector: `${'social' | 'sso'}/${string}`,
  user: IdpUser,
): Promise<{ authorizationUri: URL; verificationId: string }> {
  const state = newState();
  const started = await browser.call('post', `api/experience/verification/${connector}/authorization-uri`, {
    state,
    redirectUri: callback,
  });
  expectStatus(started, 200);
  expect(started.body).to.have.keys('authorizationUri', 'verificationId');
  const authorizationUri = new URL(started.body.authorizationUri);
  expect(authorizationUri.searchParams.get('state')).to.equal(state);
  const back = await signInAtIdp(idp, started.body.authorizationUri, user);
  expect(back.origin + back.pathname).to.equal(callback);
  expect(back.searchParams.get('state')).to.equal(state);
  expect(back.searchParams.get('code')).to.be.a('string');
  const verified = await browser.call('post', `api/experience/verification/${connector}/verify`, {
    connectorData: Object.fromEntries(back.searchParams),
    verificationId: started.body.verificationId,
  });
  expectStatus(verified, 200);
  expect(verified.body).to.deep.equal({ verificationId: started.body.verificationId });
  return { authorizationUri, verificationId: verified.body.verificationId };
}
