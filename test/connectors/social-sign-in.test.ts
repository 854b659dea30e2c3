import { expect } from 'chai';

import type { Browser } from '../experience/browser.ts';
import {
  createUser,
  identify,
  openExperience,
  passwordVerification,
  submitToApplication,
} from '../experience/experience-helpers.ts';
import { expectError, expectStatus } from '../support/expect.ts';
import { type ExternalSignIn, startExternalSignIn, verifyAtIdp } from '../support/external-sign-in.ts';
import { HookEvents } from '../support/hook-events.ts';
import { createIdpUser, type Idp, type IdpUser, newState, signInAtIdp } from '../support/idp.ts';
import { logtoManagementClient, type TestService } from '../support/service.ts';
import { ifSet, unique } from '../support/values.ts';

/**
 * Social sign-in against a real IdP (a second instance of this service): the redirect round trip over
 * HTTP, registration, sign-in, linking (EXPERIENCE-API.md sequence 6), with their events.
 */

const password = 'Granite-Kestrel-64';

describe('social sign-in through generic OIDC and OAuth 2.0 connectors', () => {
  let setting: ExternalSignIn;
  let service: TestService;
  let idp: Idp;
  let events: HookEvents;
  let spa: { id: string };
  let callback: string;
  /** OpenID Connect, endpoints found by discovery from the IdP's issuer. */
  let oidc: { id: string; target: string };
  /** Plain OAuth 2.0: the code buys a token, which buys the IdP's /oidc/me, mapped by profileMap. */
  let oauth2: { id: string; target: string };

  async function createConnector(connectorId: 'oidc' | 'oauth2', config: Record<string, unknown>) {
    const created = await service.api.post('connectors', {
      json: { connectorId, config, metadata: { target: unique(`${connectorId}-`) } },
    });
    expectStatus(created, 200);
    return created.body as { id: string; target: string };
  }

  const oauth2Config = (extra: Record<string, unknown> = {}) => ({
    authorizationEndpoint: `${idp.issuer}/auth`,
    tokenEndpoint: `${idp.issuer}/token`,
    userInfoEndpoint: `${idp.issuer}/me`,
    clientId: idp.client.id,
    clientSecret: idp.client.secret,
    tokenEndpointAuthMethod: 'client_secret_basic',
    // The IdP's userinfo answers tokens with `openid` (and no resource: an opaque token).
    scope: 'openid profile email',
    profileMap: { id: 'sub', email: 'email', name: 'name' },
    ...extra,
  });

  before(async function () {
    // Two instances of the service (ours and the outside IdP): slow on a busy machine.
    this.timeout(120_000);
    setting = await startExternalSignIn('social');
    ({ service, idp, events, spa, callback } = setting);
    oidc = await createConnector('oidc', {
      issuer: idp.issuer,
      clientId: idp.client.id,
      clientSecret: idp.client.secret,
    });
    // A plain OAuth 2.0 server says nothing about emails: this one is trusted to have checked them.
    oauth2 = await createConnector('oauth2', oauth2Config({ trustUnverifiedEmail: true }));
  });
  after(() => ifSet(setting)?.stop());

  /** Starts the social sign-in, goes through the IdP as `user`, and verifies the callback: the verification id. */
  const socialVerification = async (browser: Browser, connector: { id: string }, user: IdpUser) =>
    (await verifyAtIdp(setting, browser, `social/${connector.id}`, user)).verificationId;

  it('sends the browser to the IdP with state, PKCE (S256) and, for OpenID Connect, a nonce', async () => {
    const browser = await openExperience(service, spa.id);
    const state = newState();
    const started = await browser.call('post', `api/experience/verification/social/${oidc.id}/authorization-uri`, {
      state,
      redirectUri: callback,
    });
    expectStatus(started, 200);
    const uri = new URL(started.body.authorizationUri);
    expect(uri.origin + uri.pathname).to.equal(`${idp.issuer}/auth`);
    expect(Object.fromEntries(uri.searchParams)).to.include({
      client_id: idp.client.id,
      redirect_uri: callback,
      response_type: 'code',
      state,
      code_challenge_method: 'S256',
      scope: 'openid profile email',
    });
    expect(uri.searchParams.get('code_challenge')).to.match(/^[\w-]{43}$/);
    expect(uri.searchParams.get('nonce')).to.be.a('string');

    const plain = await browser.call('post', `api/experience/verification/social/${oauth2.id}/authorization-uri`, {
      state,
      redirectUri: callback,
    });
    expectStatus(plain, 200);
    expect(new URL(plain.body.authorizationUri).searchParams.get('code_challenge_method')).to.equal('S256');
  });

  it('OIDC: registers a new account (User.Created, JIT by verified email domain), PostRegister at submit; the holder signs in later', async () => {
    const domain = `${unique('social')}.example`;
    const organization = (await service.api.post('organizations', { json: { name: unique('social-org-') } })).body;
    expectStatus(
      await service.api.put(`organizations/${organization.id}/jit/email-domains`, { json: { emailDomains: [domain] } }),
      204,
    );
    const upstream = await createIdpUser(idp, `newcomer@${domain}`);

    const browser = await openExperience(service, spa.id, 'Register');
    const verificationId = await socialVerification(browser, oidc, upstream);
    const { result, payloads } = await events.expect(['User.Created', 'Organization.Membership.Updated'], () =>
      identify(browser, { verificationId }),
    );
    expectStatus(result, 201);
    const user = payloads['User.Created'][0].data;
    expect(user).to.include({ primaryEmail: upstream.email, name: upstream.name });
    expect(user.identities[oidc.target].userId).to.equal(upstream.id);
    expect(payloads['User.Created'][0]).to.include({ path: '/api/experience/identification', method: 'POST' });
    expect(payloads['Organization.Membership.Updated'][0]).to.include({ organizationId: organization.id });
    expect(payloads['Organization.Membership.Updated'][0].addedUserIds).to.deep.equal([user.id]);

    const registered = await events.expect(['PostRegister'], () => submitToApplication(browser));
    expect(registered.payloads.PostRegister[0]).to.include({ userId: user.id, interactionEvent: 'Register' });

    const identities = await service.api.get(`users/${user.id}/identities`);
    expectStatus(identities, 200);
    expect(Object.keys(identities.body)).to.deep.equal([oidc.target]);
    expect(identities.body[oidc.target].userId).to.equal(upstream.id);
    expect(identities.body[oidc.target].details).to.include({
      sub: upstream.id,
      email: upstream.email,
      email_verified: true,
    });

    // Next time the identity's holder signs in, whichever screen the page started with; nothing changes.
    const again = await openExperience(service, spa.id, 'SignIn');
    const second = await socialVerification(again, oidc, upstream);
    expectStatus(await identify(again, { verificationId: second }), 204);
    const signedIn = await events.expect(['PostSignIn'], () => submitToApplication(again));
    expect(signedIn.payloads.PostSignIn[0]).to.include({ userId: user.id, interactionEvent: 'SignIn' });
  });

  it("Logto's OIDC connector shape (explicit endpoints, idTokenVerificationConfig.jwksUri, no openid in the scope): registers, then signs in", async () => {
    // As Logto's own OIDC connector is configured: no issuer, no discovery.
    const logtoShaped = await createConnector('oidc', {
      authorizationEndpoint: `${idp.issuer}/auth`,
      tokenEndpoint: `${idp.issuer}/token`,
      userInfoEndpoint: `${idp.issuer}/me`,
      idTokenVerificationConfig: { jwksUri: `${idp.issuer}/jwks` },
      clientId: idp.client.id,
      clientSecret: idp.client.secret,
      scope: 'profile email',
      authRequestOptionalConfig: { prompt: 'login' },
      customConfig: { hd: 'example.org' },
    });
    const upstream = await createIdpUser(idp, `${unique('logto-shaped')}@example.org`);

    const browser = await openExperience(service, spa.id, 'Register');
    const { authorizationUri, verificationId } = await verifyAtIdp(
      setting,
      browser,
      `social/${logtoShaped.id}`,
      upstream,
    );
    expect(Object.fromEntries(authorizationUri.searchParams)).to.include({
      scope: 'profile email openid',
      prompt: 'login',
      hd: 'example.org',
      client_id: idp.client.id,
      code_challenge_method: 'S256',
    });
    const { result, payloads } = await events.expect(['User.Created'], () => identify(browser, { verificationId }));
    expectStatus(result, 201);
    const user = payloads['User.Created'][0].data;
    // The email came from the userinfo endpoint, marked verified by the IdP.
    expect(user).to.include({ primaryEmail: upstream.email, name: upstream.name });
    expect(user.identities[logtoShaped.target].userId).to.equal(upstream.id);
    await events.expect(['PostRegister'], () => submitToApplication(browser));

    const again = await openExperience(service, spa.id, 'SignIn');
    const second = await socialVerification(again, logtoShaped, upstream);
    expectStatus(await identify(again, { verificationId: second }), 204);
    const signedIn = await events.expect(['PostSignIn'], () => submitToApplication(again));
    expect(signedIn.payloads.PostSignIn[0]).to.include({ userId: user.id });
  });

  it('explicit endpoints: an ID token that does not name the configured issuer is not taken', async () => {
    const connector = await createConnector('oidc', {
      authorizationEndpoint: `${idp.issuer}/auth`,
      tokenEndpoint: `${idp.issuer}/token`,
      idTokenVerificationConfig: { jwksUri: `${idp.issuer}/jwks`, issuer: 'https://someone-else.example' },
      clientId: idp.client.id,
      clientSecret: idp.client.secret,
      scope: 'openid',
    });
    const upstream = await createIdpUser(idp, `${unique('other-issuer')}@example.org`);
    const browser = await openExperience(service, spa.id);
    const state = newState();
    const started = await browser.call('post', `api/experience/verification/social/${connector.id}/authorization-uri`, {
      state,
      redirectUri: callback,
    });
    expectStatus(started, 200);
    const back = await signInAtIdp(idp, started.body.authorizationUri, upstream);
    const verified = await browser.call('post', `api/experience/verification/social/${connector.id}/verify`, {
      connectorData: Object.fromEntries(back.searchParams),
      verificationId: started.body.verificationId,
    });
    expectError(verified, 400, 'connector.authorization_failed');
  });

  it('OAuth 2.0: an unknown identity whose email an account holds → 404 with relatedUser; linkSocialIdentity links it (User.Data.Updated)', async () => {
    const email = `${unique('linker')}@example.com`;
    const upstream = await createIdpUser(idp, email);
    const account = await createUser(service, { username: unique('linker'), primaryEmail: email, password });

    const browser = await openExperience(service, spa.id);
    const verificationId = await socialVerification(browser, oauth2, upstream);
    const missing = await identify(browser, { verificationId });
    expectError(missing, 404, 'user.identity_not_exist');
    expect(missing.body.data).to.deep.equal({ relatedUser: email });

    const { result, payloads } = await events.expect(['User.Data.Updated'], () =>
      identify(browser, { verificationId, linkSocialIdentity: true }),
    );
    expectStatus(result, 204);
    const updated = payloads['User.Data.Updated'][0];
    expect(updated.data.id).to.equal(account.id);
    expect(updated.data.identities[oauth2.target].userId).to.equal(upstream.id);
    expect(updated).to.include({ path: '/api/experience/identification', method: 'POST' });
    await events.expect(['PostSignIn'], () => submitToApplication(browser));

    // The profile map took `sub` as the id; the details are the IdP's profile.
    const identities = (await service.api.get(`users/${account.id}/identities`)).body;
    expect(identities[oauth2.target].details).to.include({ sub: upstream.id, email, name: upstream.name });

    const again = await openExperience(service, spa.id);
    expectStatus(await identify(again, { verificationId: await socialVerification(again, oauth2, upstream) }), 204);
  });

  it('profile {type: social}: a social identity joins the account the interaction signs in by password (User.Data.Updated at submit)', async () => {
    const upstream = await createIdpUser(idp, `${unique('stranger')}@example.net`);
    const username = unique('owner');
    const account = await createUser(service, { username, password });

    const browser = await openExperience(service, spa.id);
    const verificationId = await socialVerification(browser, oidc, upstream);
    const missing = await identify(browser, { verificationId });
    expectError(missing, 404, 'user.identity_not_exist');
    expect(missing.body.data ?? {}).to.not.have.property('relatedUser');
    // Nothing to link to by email: the user proves an account of theirs instead.
    expectError(await identify(browser, { verificationId, linkSocialIdentity: true }), 404, 'user.identity_not_exist');

    // As in Logto, a sign-in stages the identity once identified (before its second factor, if any).
    const link = () => browser.call('post', 'api/experience/profile', { type: 'social', verificationId });
    expectError(await link(), 404, 'session.identifier_not_found');
    const proof = await passwordVerification(browser, { type: 'username', value: username }, password);
    expectStatus(proof, 200);
    expectStatus(await identify(browser, { verificationId: proof.body.verificationId }), 204);
    expectStatus(await link(), 204);
    const { payloads } = await events.expect(['User.Data.Updated', 'PostSignIn'], () => submitToApplication(browser));
    expect(payloads['User.Data.Updated'][0].data.id).to.equal(account.id);
    expect(payloads['User.Data.Updated'][0].data.identities[oidc.target].userId).to.equal(upstream.id);
    expect(payloads['User.Data.Updated'][0]).to.include({ path: '/api/experience/submit' });

    const again = await openExperience(service, spa.id);
    expectStatus(await identify(again, { verificationId: await socialVerification(again, oidc, upstream) }), 204);
  });

  it('an email the IdP does not vouch for neither names nor links an account', async () => {
    const untrusted = await createConnector('oauth2', oauth2Config());
    const email = `${unique('unverified')}@example.org`;
    const upstream = await createIdpUser(idp, email);
    await createUser(service, { username: unique('holder'), primaryEmail: email, password });

    const browser = await openExperience(service, spa.id);
    const verificationId = await socialVerification(browser, untrusted, upstream);
    const missing = await identify(browser, { verificationId });
    expectError(missing, 404, 'user.identity_not_exist');
    expect(missing.body.data ?? {}).to.not.have.property('relatedUser');
    expectError(await identify(browser, { verificationId, linkSocialIdentity: true }), 404, 'user.identity_not_exist');

    // Registering makes an account without that email.
    const register = await openExperience(service, spa.id, 'Register');
    const { payloads } = await events.expect(['User.Created'], async () =>
      expectStatus(
        await identify(register, { verificationId: await socialVerification(register, untrusted, upstream) }),
        201,
      ),
    );
    expect(payloads['User.Created'][0].data).to.include({ primaryEmail: null, name: upstream.name });
  });

  it('refuses a callback that does not match, an IdP error, a reused or foreign verification, an unknown connector', async () => {
    const upstream = await createIdpUser(idp, `${unique('careful')}@example.com`);
    const browser = await openExperience(service, spa.id, 'Register');
    const state = newState();
    expectError(
      await browser.call('post', `api/experience/verification/social/nope/authorization-uri`, {
        state,
        redirectUri: callback,
      }),
      404,
      'entity.not_exists_with_id',
    );
    expectError(
      await browser.call('post', `api/experience/verification/social/${oidc.id}/authorization-uri`, {
        state,
        redirectUri: 'javascript:alert(1)',
      }),
      400,
      'guard.invalid_input',
    );
    expectError(
      await browser.call('post', `api/experience/verification/social/${oidc.id}/authorization-uri`, {
        redirectUri: callback,
      }),
      400,
      'guard.invalid_input',
    );

    for (const connector of [oidc, oauth2]) {
      const started = await browser.call(
        'post',
        `api/experience/verification/social/${connector.id}/authorization-uri`,
        { state, redirectUri: callback },
      );
      const { verificationId } = started.body;
      // Not verified yet: it identifies no one.
      expectError(await identify(browser, { verificationId }), 400, 'session.verification_failed');
      const back = Object.fromEntries((await signInAtIdp(idp, started.body.authorizationUri, upstream)).searchParams);
      const verify = (connectorData: Record<string, unknown>, id = verificationId, path = connector.id) =>
        browser.call('post', `api/experience/verification/social/${path}/verify`, {
          connectorData,
          verificationId: id,
        });

      expectError(await verify({ ...back, state: 'forged' }), 400, 'connector.authorization_failed');
      expectError(
        await verify({ error: 'access_denied', error_description: 'no', state }),
        400,
        'connector.authorization_failed',
      );
      expectError(await verify({ state }), 400, 'connector.authorization_failed');
      expectError(await verify(back, 'no-such-verification'), 404, 'session.verification_session_not_found');
      expectError(
        await verify(back, verificationId, connector === oidc ? oauth2.id : oidc.id),
        400,
        'session.verification_failed',
      );
      expectError(
        await browser.call('post', `api/experience/verification/sso/${connector.id}/verify`, {
          connectorData: back,
          verificationId,
        }),
        400,
        'session.verification_failed',
      );
      expectError(
        await browser.call('post', `api/experience/verification/social/${connector.id}/verify`, {
          connectorData: 'text',
          verificationId,
        }),
        400,
        'guard.invalid_input',
      );

      // The refused attempts did not spend the code: the real callback still verifies, once.
      expectStatus(await verify(back), 200);
      expectError(await verify(back), 400, 'session.verification_failed');
    }
  });

  it('a suspended holder cannot sign in with the identity', async () => {
    const upstream = await createIdpUser(idp, `${unique('suspended')}@example.com`);
    const register = await openExperience(service, spa.id, 'Register');
    const created = await identify(register, { verificationId: await socialVerification(register, oidc, upstream) });
    expectStatus(created, 201);
    const userId = (await service.api.get('users', { searchParams: { search: upstream.email } })).body[0].id;
    expectStatus(await service.api.patch(`users/${userId}/is-suspended`, { json: { isSuspended: true } }), 200);
    const browser = await openExperience(service, spa.id);
    expectError(
      await identify(browser, { verificationId: await socialVerification(browser, oidc, upstream) }),
      401,
      'user.suspended',
    );
  });

  it('admins see, set and remove identities (GET/PUT/DELETE /users/:userId/identities)', async () => {
    const user = await createUser(service, { username: unique('ids'), password });
    const other = await createUser(service, { username: unique('ids'), password });
    const apiClient = logtoManagementClient(service);
    const empty = await service.api.get(`users/${user.id}/identities`);
    expectStatus(empty, 200);
    expect(empty.body).to.deep.equal({});

    const set = await apiClient.PUT('/api/users/{userId}/identities/{target}', {
      params: { path: { userId: user.id, target: oidc.target } },
      body: { userId: 'upstream-1', details: { email: 'a@example.com' } },
    });
    expect(set.response.status, JSON.stringify(set.error)).to.equal(201);
    expect(set.data).to.deep.equal({ [oidc.target]: { userId: 'upstream-1', details: { email: 'a@example.com' } } });
    const replaced = await service.api.put(`users/${user.id}/identities/${oidc.target}`, {
      json: { userId: 'upstream-2' },
    });
    expectStatus(replaced, 200);
    expect(replaced.body[oidc.target].userId).to.equal('upstream-2');
    // The identity is someone's: not a second account's.
    expectError(
      await service.api.put(`users/${other.id}/identities/${oidc.target}`, { json: { userId: 'upstream-2' } }),
      422,
      'user.identity_already_in_use',
    );
    // The old one is free again.
    expectStatus(
      await service.api.put(`users/${other.id}/identities/${oidc.target}`, { json: { userId: 'upstream-1' } }),
      201,
    );

    const all = await service.api.get(`users/${user.id}/all-identities`);
    expectStatus(all, 200);
    expect(all.body).to.deep.equal({
      socialIdentities: [{ target: oidc.target, identity: { userId: 'upstream-2' } }],
      ssoIdentities: [],
    });
    expect((await service.api.get(`users/${user.id}`)).body.identities).to.deep.equal({
      [oidc.target]: { userId: 'upstream-2' },
    });

    const removed = await service.api.delete(`users/${user.id}/identities/${oidc.target}`);
    expectStatus(removed, 200);
    expect(removed.body).to.include({ id: user.id });
    expect(removed.body.identities).to.deep.equal({});
    expectError(
      await service.api.delete(`users/${user.id}/identities/${oidc.target}`),
      404,
      'entity.not_exists_with_id',
    );

    expectError(await service.api.get('users/no-such-user/identities'), 404, 'entity.not_exists_with_id');
    expectError(await service.api.get('users/no-such-user/all-identities'), 404, 'entity.not_exists_with_id');
    expectError(
      await service.api.put(`users/no-such-user/identities/${oidc.target}`, { json: { userId: 'x' } }),
      404,
      'entity.not_exists_with_id',
    );
    expectError(
      await service.api.put(`users/${user.id}/identities/${oidc.target}`, { json: {} }),
      400,
      'guard.invalid_input',
    );
    expectError(
      await service.api.put(`users/${user.id}/identities/${oidc.target}`, { json: { userId: 'x', extra: 1 } }),
      400,
      'guard.invalid_input',
    );
  });

  it('a removed identity no longer signs its former holder in', async () => {
    const upstream = await createIdpUser(idp, `${unique('removed')}@example.net`);
    const register = await openExperience(service, spa.id, 'Register');
    expectStatus(await identify(register, { verificationId: await socialVerification(register, oidc, upstream) }), 201);
    const userId = (await service.api.get('users', { searchParams: { search: upstream.email } })).body[0].id;
    expectStatus(await service.api.delete(`users/${userId}/identities/${oidc.target}`), 200);
    const browser = await openExperience(service, spa.id);
    const verificationId = await socialVerification(browser, oidc, upstream);
    const missing = await identify(browser, { verificationId });
    expectError(missing, 404, 'user.identity_not_exist');
    expect(missing.body.data).to.deep.equal({ relatedUser: upstream.email });
  });
});
