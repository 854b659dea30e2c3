import { expect } from 'chai';

import type { Browser } from '../experience/browser.ts';
import { createSpa, openExperience } from '../experience/experience-helpers.ts';
import { expectStatus } from '../support/expect.ts';
import { createIdpUser, type Idp, newState, signInAtIdp, startIdp } from '../support/idp.ts';
import { scrape } from '../support/metrics.ts';
import { type HttpResponse, type Json, startService, type TestService } from '../support/service.ts';
import { startForwarder, startStandInIssuer } from '../support/stand-in-idp.ts';
import { ifSet } from '../support/values.ts';

/**
 * A connector whose identity provider fails: the end user reads a plain sentence (never
 * `TypeError: fetch failed`), the operator finds one structured line in the log with the
 * connector's id and where it failed, and never a secret.
 */
describe('a failing identity provider: a sentence for the user, a log line for the operator', () => {
  let service: TestService;
  let idp: Idp;
  let spa: { id: string };
  const callback = () => `${service.url}/callback/social`;
  const clientSecret = 'connector-secret-that-must-not-be-logged';
  const notAvailable =
    'Signing in with this provider is not available right now. Try again later, or sign in another way.';

  before(async function () {
    // Two instances of the service (ours and the outside IdP): slow on a busy machine.
    this.timeout(120_000);
    service = await startService({ logs: true });
    idp = await startIdp([`${service.url}/callback/social`]);
    spa = await createSpa(service);
  });
  after(async () => {
    await ifSet(idp)?.stop();
    await ifSet(service)?.stop();
  });

  async function createConnector(connectorId: 'oidc' | 'oauth2', config: Record<string, unknown>): Promise<string> {
    const created = await service.api.post('connectors', {
      json: {
        connectorId,
        config,
        metadata: { target: `broken-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}` },
      },
    });
    expectStatus(created, 200);
    return created.body.id;
  }

  /** The log lines about a connector, parsed. */
  const linesAbout = (connectorId: string) =>
    service
      .logs()
      .split('\n')
      .filter((line) => line.includes(connectorId))
      .map((line) => JSON.parse(line) as Record<string, Json>)
      .filter((line) => line.msg !== 'request');

  function expectPlainSentence(response: HttpResponse, code: string): void {
    expect(response.statusCode, JSON.stringify(response.body)).to.equal(400);
    expect(response.body.code).to.equal(code);
    expect(response.body.message).to.match(/^[A-Z][^:]*\.$/);
    expect(JSON.stringify(response.body)).to.not.match(
      /TypeError|fetch failed|ECONNREFUSED|127\.0\.0\.1|invalid_client/,
    );
  }

  const start = (browser: Browser, connectorId: string, state = newState()) =>
    browser.call('post', `api/experience/verification/social/${connectorId}/authorization-uri`, {
      state,
      redirectUri: callback(),
    });

  it('discovery fails (the issuer answered when the connector was saved, not any more): a plain sentence, and a warning with the connector id and stage', async () => {
    const issuer = await startStandInIssuer();
    const connectorId = await createConnector('oidc', { issuer: issuer.issuer, clientId: 'client', clientSecret });
    await issuer.close();
    const browser = await openExperience(service, spa.id);
    const before = await scrape(service);

    expectPlainSentence(await start(browser, connectorId), 'connector.invalid_configuration');

    const [line, ...more] = linesAbout(connectorId);
    expect(more).to.deep.equal([]);
    expect(line).to.include({ level: 40, connectorId, connectorKind: 'social', stage: 'discovery' });
    expect(line.err.message).to.be.a('string');
    expect(service.logs()).to.not.include(clientSecret);
    const after = await scrape(service);
    expect(
      after.value('identity_connector_failures_total', { stage: 'discovery' }) -
        before.value('identity_connector_failures_total', { stage: 'discovery' }),
    ).to.equal(1);
  });

  it("the IdP refuses the code (wrong client secret): a plain sentence, and a warning with the IdP's error code", async () => {
    const connectorId = await createConnector('oidc', { issuer: idp.issuer, clientId: idp.client.id, clientSecret });
    const browser = await openExperience(service, spa.id);
    const state = newState();
    const started = await start(browser, connectorId, state);
    expectStatus(started, 200);
    const back = await signInAtIdp(
      idp,
      started.body.authorizationUri,
      await createIdpUser(idp, `refused-${Date.now()}@example.org`),
    );
    const verified = await browser.call('post', `api/experience/verification/social/${connectorId}/verify`, {
      connectorData: Object.fromEntries(back.searchParams),
      verificationId: started.body.verificationId,
    });
    expectPlainSentence(verified, 'connector.authorization_failed');

    const [line, ...more] = linesAbout(connectorId);
    expect(more).to.deep.equal([]);
    expect(line).to.include({ level: 40, connectorId, stage: 'token', idpError: 'invalid_client' });
    const logs = service.logs();
    expect(logs).to.not.include(clientSecret);
    expect(logs).to.not.include(back.searchParams.get('code')!);
  });

  it('plain OAuth 2.0: a userinfo endpoint that stops answering is logged as such', async () => {
    const userinfo = await startForwarder(idp.service.url);
    const connectorId = await createConnector('oauth2', {
      authorizationEndpoint: `${idp.issuer}/auth`,
      tokenEndpoint: `${idp.issuer}/token`,
      userInfoEndpoint: `${userinfo.url}/oidc/me`,
      clientId: idp.client.id,
      clientSecret: idp.client.secret,
      tokenEndpointAuthMethod: 'client_secret_basic',
      scope: 'openid profile email',
    });
    const browser = await openExperience(service, spa.id);
    const started = await start(browser, connectorId);
    expectStatus(started, 200);
    const back = await signInAtIdp(
      idp,
      started.body.authorizationUri,
      await createIdpUser(idp, `userinfo-${Date.now()}@example.org`),
    );
    await userinfo.close();
    const verified = await browser.call('post', `api/experience/verification/social/${connectorId}/verify`, {
      connectorData: Object.fromEntries(back.searchParams),
      verificationId: started.body.verificationId,
    });
    expectPlainSentence(verified, 'connector.authorization_failed');
    const [line] = linesAbout(connectorId);
    expect(line).to.include({ level: 40, connectorId, stage: 'userinfo' });
    expect(line.err.message).to.include('ECONNREFUSED');
    expect(verified.body.message).to.equal(notAvailable);
    expect(service.logs()).to.not.include(idp.client.secret);
  });

  it("Logto's OIDC shape: a token endpoint and key set that stop answering give a plain sentence and a warning at the token stage", async () => {
    const backChannel = await startForwarder(idp.service.url);
    const connectorId = await createConnector('oidc', {
      authorizationEndpoint: `${idp.issuer}/auth`,
      tokenEndpoint: `${backChannel.url}/oidc/token`,
      idTokenVerificationConfig: { jwksUri: `${backChannel.url}/oidc/jwks` },
      clientId: idp.client.id,
      clientSecret: idp.client.secret,
      scope: 'profile',
    });
    const browser = await openExperience(service, spa.id);
    const started = await start(browser, connectorId);
    expectStatus(started, 200);
    const back = await signInAtIdp(
      idp,
      started.body.authorizationUri,
      await createIdpUser(idp, `gone-${Date.now()}@example.org`),
    );
    await backChannel.close();
    const verified = await browser.call('post', `api/experience/verification/social/${connectorId}/verify`, {
      connectorData: Object.fromEntries(back.searchParams),
      verificationId: started.body.verificationId,
    });
    expectPlainSentence(verified, 'connector.authorization_failed');
    expect(verified.body.message).to.equal(notAvailable);
    const [line, ...more] = linesAbout(connectorId);
    expect(more).to.deep.equal([]);
    expect(line).to.include({ level: 40, connectorId, connectorKind: 'social', stage: 'token' });
    // Refused, or a kept-alive connection from the save-time check found closed.
    expect(line.err.message).to.match(/ECONNREFUSED|socket hang up/);
    const logs = service.logs();
    expect(logs).to.not.include(idp.client.secret);
    expect(logs).to.not.include(back.searchParams.get('code')!);
  });

  it("the user cancels at the IdP: a plain sentence, logged at info (not an operator's problem)", async () => {
    const connectorId = await createConnector('oidc', {
      issuer: idp.issuer,
      clientId: idp.client.id,
      clientSecret: idp.client.secret,
    });
    const browser = await openExperience(service, spa.id);
    const state = newState();
    const started = await start(browser, connectorId, state);
    const verified = await browser.call('post', `api/experience/verification/social/${connectorId}/verify`, {
      connectorData: { error: 'access_denied', error_description: 'The user said no', state },
      verificationId: started.body.verificationId,
    });
    expectPlainSentence(verified, 'connector.authorization_failed');
    const [line] = linesAbout(connectorId);
    expect(line).to.include({ level: 30, connectorId, stage: 'callback', idpError: 'access_denied' });
  });
});
