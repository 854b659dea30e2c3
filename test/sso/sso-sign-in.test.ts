import { expect } from 'chai';

import type { Browser } from '../experience/browser.ts';
import {
  createUser,
  identify,
  openExperience,
  passwordVerification,
  submitToApplication,
  verifyEmail,
} from '../experience/experience-helpers.ts';
import { expectError, expectStatus } from '../support/expect.ts';
import { type ExternalSignIn, startExternalSignIn, verifyAtIdp } from '../support/external-sign-in.ts';
import { HookEvents } from '../support/hook-events.ts';
import { createIdpUser, type Idp, type IdpUser, newState, signInAtIdp } from '../support/idp.ts';
import type { TestService } from '../support/service.ts';
import { ifSet, unique } from '../support/values.ts';

/**
 * Enterprise SSO against a real IdP (a second instance of this service): users of the connector's
 * email domains are sent there; the IdP's user signs in, is linked by verified email, or is created,
 * and joins the organizations that admit the connector just in time.
 */

const password = 'Granite-Kestrel-64';

describe('enterprise SSO sign-in', () => {
  let setting: ExternalSignIn;
  let service: TestService;
  let idp: Idp;
  let events: HookEvents;
  let spa: { id: string };
  let callback: string;
  let domain: string;
  let connector: { id: string };
  let organization: { id: string };
  let role: { id: string };

  before(async () => {
    setting = await startExternalSignIn('sso');
    ({ service, idp, events, spa, callback } = setting);
    domain = `${unique('corp')}.example`;
    const created = await service.api.post('sso-connectors', {
      json: {
        providerName: 'OIDC',
        connectorName: 'Corp',
        config: { issuer: idp.issuer, clientId: idp.client.id, clientSecret: idp.client.secret },
        domains: [domain],
      },
    });
    expectStatus(created, 200);
    connector = created.body;
    organization = (await service.api.post('organizations', { json: { name: unique('corp-org-') } })).body;
    role = (await service.api.post('organization-roles', { json: { name: unique('member-') } })).body;
    expectStatus(
      await service.api.post(`organizations/${organization.id}/jit/sso-connectors`, {
        json: { ssoConnectorIds: [connector.id] },
      }),
      201,
    );
    expectStatus(
      await service.api.put(`organizations/${organization.id}/jit/roles`, { json: { organizationRoleIds: [role.id] } }),
      204,
    );
  });
  after(() => ifSet(setting)?.stop());

  /** The SSO round trip through the IdP as `user`: the verified record's id. */
  async function ssoVerification(browser: Browser, user: IdpUser, connectorId = connector.id): Promise<string> {
    const { authorizationUri, verificationId } = await verifyAtIdp(setting, browser, `sso/${connectorId}`, user);
    expect(Object.fromEntries(authorizationUri.searchParams)).to.include({
      client_id: idp.client.id,
      code_challenge_method: 'S256',
    });
    expect(authorizationUri.searchParams.get('scope')!.split(' ')).to.include.members(['openid', 'profile', 'email']);
    expect(authorizationUri.searchParams.get('nonce')).to.be.a('string');
    return verificationId;
  }

  const members = async () =>
    ((await service.api.get(`organizations/${organization.id}/users`)).body as Array<{ id: string }>).map(
      (user) => user.id,
    );

  it("finds the connector serving an email's domain (the page sends the user there)", async () => {
    const browser = await openExperience(service, spa.id);
    const found = await browser.call(
      'get',
      `api/experience/sso-connectors?email=${encodeURIComponent(`someone@${domain.toUpperCase()}`)}`,
    );
    expectStatus(found, 200);
    expect(found.body).to.deep.equal({ connectorIds: [connector.id] });
    expect(
      (await browser.call('get', 'api/experience/sso-connectors?email=someone@elsewhere.example')).body,
    ).to.deep.equal({ connectorIds: [] });
    expectError(
      await browser.call('get', 'api/experience/sso-connectors?email=not-an-email'),
      400,
      'guard.invalid_input',
    );
    expect((await service.http.get(`api/experience/sso-connectors?email=a@${domain}`)).statusCode).to.be.within(
      400,
      499,
    );

    const settings = await service.http.get('api/.well-known/sign-in-exp');
    expect(settings.body.ssoConnectors).to.deep.include({ id: connector.id, connectorName: 'Corp' });
    expect(JSON.stringify(settings.body)).to.not.include(idp.client.secret);
  });

  it('an email in an SSO domain cannot sign in by password or code: 422 session.sso_enabled', async () => {
    const email = `${unique('pw')}@${domain}`;
    await createUser(service, { username: unique('pw'), primaryEmail: email, password });
    const browser = await openExperience(service, spa.id);
    const verification = await passwordVerification(browser, { type: 'email', value: email }, password);
    expectStatus(verification, 200);
    expectError(
      await identify(browser, { verificationId: verification.body.verificationId }),
      422,
      'session.sso_enabled',
    );

    const coded = await openExperience(service, spa.id);
    expectError(
      await identify(coded, { verificationId: await verifyEmail(service, coded, email, 'SignIn') }),
      422,
      'session.sso_enabled',
    );
  });

  it('an email in an SSO domain cannot register by code either: 422 session.sso_enabled, and no account', async () => {
    const email = `${unique('reg')}@${domain}`;
    const browser = await openExperience(service, spa.id);
    expectStatus(await browser.call('put', 'api/experience', { interactionEvent: 'Register' }), 204);
    expectError(
      await identify(browser, { verificationId: await verifyEmail(service, browser, email, 'Register') }),
      422,
      'session.sso_enabled',
    );
    expect((await service.api.get('users', { searchParams: { search: email } })).body).to.deep.equal([]);
  });

  it('a new user is created (201, User.Created) and joins the organization with its JIT roles; PostRegister at submit', async () => {
    const upstream = await createIdpUser(idp, `${unique('new')}@${domain}`);
    const browser = await openExperience(service, spa.id);
    const verificationId = await ssoVerification(browser, upstream);
    const { result, payloads } = await events.expect(['User.Created', 'Organization.Membership.Updated'], () =>
      identify(browser, { verificationId }),
    );
    expectStatus(result, 201);
    const user = payloads['User.Created'][0].data;
    expect(user).to.include({ primaryEmail: upstream.email, name: upstream.name });
    const membership = payloads['Organization.Membership.Updated'][0];
    expect(membership).to.include({ organizationId: organization.id });
    expect(membership.addedUserIds).to.deep.equal([user.id]);
    const registered = await events.expect(['PostRegister'], () => submitToApplication(browser));
    expect(registered.payloads.PostRegister[0]).to.include({ userId: user.id, interactionEvent: 'Register' });

    expect(await members()).to.include(user.id);
    const roles = await service.api.get(`organizations/${organization.id}/users/${user.id}/roles`);
    expect(roles.body.map((held: { id: string }) => held.id)).to.deep.equal([role.id]);

    const identities = await service.api.get(`users/${user.id}/all-identities`);
    expectStatus(identities, 200);
    expect(identities.body.socialIdentities).to.deep.equal([]);
    expect(identities.body.ssoIdentities).to.have.length(1);
    const [{ ssoConnectorId, ssoIdentity }] = identities.body.ssoIdentities;
    expect(ssoConnectorId).to.equal(connector.id);
    expect(ssoIdentity).to.include({
      userId: user.id,
      issuer: idp.issuer,
      identityId: upstream.id,
      ssoConnectorId: connector.id,
    });
    expect(ssoIdentity.detail).to.include({ sub: upstream.id, email: upstream.email });

    // Next time the holder signs in: no data change, no new membership.
    const again = await openExperience(service, spa.id, 'Register');
    const second = await ssoVerification(again, upstream);
    await events.expect([], async () => expectStatus(await identify(again, { verificationId: second }), 204));
    const signedIn = await events.expect(['PostSignIn'], () => submitToApplication(again));
    expect(signedIn.payloads.PostSignIn[0]).to.include({ userId: user.id, interactionEvent: 'SignIn' });
  });

  it('an account with the same email is linked (User.Data.Updated) and joins the organization (Organization.Membership.Updated)', async () => {
    const email = `${unique('known')}@${domain}`;
    const upstream = await createIdpUser(idp, email);
    const account = await createUser(service, { username: unique('known'), primaryEmail: email, password });
    const browser = await openExperience(service, spa.id);
    const verificationId = await ssoVerification(browser, upstream);
    const { result, payloads } = await events.expect(['User.Data.Updated', 'Organization.Membership.Updated'], () =>
      identify(browser, { verificationId }),
    );
    expectStatus(result, 204);
    expect(payloads['User.Data.Updated'][0].data.id).to.equal(account.id);
    expect(payloads['User.Data.Updated'][0]).to.include({ path: '/api/experience/identification', method: 'POST' });
    expect(payloads['Organization.Membership.Updated'][0].addedUserIds).to.deep.equal([account.id]);
    await events.expect(['PostSignIn'], () => submitToApplication(browser));

    const identities = (await service.api.get(`users/${account.id}/all-identities`)).body;
    expect(
      identities.ssoIdentities.map((identity: { ssoConnectorId: string }) => identity.ssoConnectorId),
    ).to.deep.equal([connector.id]);

    // An admin removes the link; the next SSO sign-in links by email again.
    expectStatus(await service.api.delete(`users/${account.id}/sso-identities/${connector.id}`), 204);
    expectError(
      await service.api.delete(`users/${account.id}/sso-identities/${connector.id}`),
      404,
      'entity.not_exists_with_id',
    );
    expectError(
      await service.api.delete(`users/no-such-user/sso-identities/${connector.id}`),
      404,
      'entity.not_exists_with_id',
    );
    expect((await service.api.get(`users/${account.id}/all-identities`)).body.ssoIdentities).to.deep.equal([]);
    const again = await openExperience(service, spa.id);
    const relink = await ssoVerification(again, upstream);
    await events.expect(['User.Data.Updated'], async () =>
      expectStatus(await identify(again, { verificationId: relink }), 204),
    );
  });

  it('refuses an unconfigured or unknown connector, a forged callback, and a social verification used as SSO', async () => {
    const browser = await openExperience(service, spa.id);
    const unconfigured = (
      await service.api.post('sso-connectors', { json: { providerName: 'OIDC', connectorName: unique('bare-') } })
    ).body;
    const state = newState();
    expectError(
      await browser.call('post', `api/experience/verification/sso/${unconfigured.id}/authorization-uri`, {
        state,
        redirectUri: callback,
      }),
      400,
      'connector.invalid_configuration',
    );
    expectError(
      await browser.call('post', 'api/experience/verification/sso/nope/authorization-uri', {
        state,
        redirectUri: callback,
      }),
      404,
      'entity.not_exists_with_id',
    );

    const upstream = await createIdpUser(idp, `${unique('forged')}@${domain}`);
    const started = await browser.call('post', `api/experience/verification/sso/${connector.id}/authorization-uri`, {
      state,
      redirectUri: callback,
    });
    const back = Object.fromEntries((await signInAtIdp(idp, started.body.authorizationUri, upstream)).searchParams);
    const verify = (connectorData: Record<string, unknown>) =>
      browser.call('post', `api/experience/verification/sso/${connector.id}/verify`, {
        connectorData,
        verificationId: started.body.verificationId,
      });
    expectError(await verify({ ...back, state: 'forged' }), 400, 'connector.authorization_failed');
    expectError(await verify({ ...back, code: 'not-the-code' }), 400, 'connector.authorization_failed');
    expectError(
      await identify(browser, { verificationId: started.body.verificationId }),
      400,
      'session.verification_failed',
    );
    expectError(
      await browser.call('post', `api/experience/verification/social/${connector.id}/verify`, {
        connectorData: back,
        verificationId: started.body.verificationId,
      }),
      400,
      'session.verification_failed',
    );
  });

  it('a suspended account cannot sign in through SSO', async () => {
    const email = `${unique('suspended')}@${domain}`;
    const upstream = await createIdpUser(idp, email);
    const account = await createUser(service, { username: unique('suspended'), primaryEmail: email, password });
    expectStatus(await service.api.patch(`users/${account.id}/is-suspended`, { json: { isSuspended: true } }), 200);
    const browser = await openExperience(service, spa.id);
    const verificationId = await ssoVerification(browser, upstream);
    await events.expect([], async () =>
      expectError(await identify(browser, { verificationId }), 401, 'user.suspended'),
    );
  });
});
