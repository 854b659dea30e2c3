import { expect } from 'chai';

import { createMachineWithScopes } from '../support/fixtures.ts';
import { startService, type TestService } from '../support/service.ts';
import {
  accessTokenType,
  claimsOf,
  delegationSetup,
  exchange,
  expectIssued,
  expectOAuthError,
  impersonationTokenType,
  userAccessToken,
} from './support.ts';

const managementTarget = /management API.*never a token exchange target/i;
const notATarget = /is not a token exchange target/i;

/**
 * Token exchange cannot climb: the management API is never an exchange target (even for a user
 * who holds `all`, even by impersonation), nor is any resource marked `isExchangeTarget: false`.
 */
describe('token exchange: resources that are not exchange targets', () => {
  let service: TestService;
  let setup: Awaited<ReturnType<typeof delegationSetup>>;
  /** The user's API A token; the user is also a console administrator (holds the management API's `all`). */
  let subjectToken: string;

  before(async () => {
    service = await startService();
    setup = await delegationSetup(service);
    const promoted = await service.api.post(`users/${setup.user.id}/roles`, { json: { roleIds: ['console-admin'] } });
    expect(promoted.statusCode, JSON.stringify(promoted.body)).to.equal(201);
    subjectToken = await userAccessToken(service, setup.frontend.id, setup.user, setup.apiA.resource.indicator);
  });
  after(() => service.stop());

  const exchangeFor = (resource: string, scope: string, token = subjectToken, type = accessTokenType) =>
    exchange(service, setup.backend, { subject_token: token, subject_token_type: type, resource, scope });

  async function impersonationToken(): Promise<string> {
    const response = await service.api.post('subject-tokens', { json: { userId: setup.user.id } });
    expect(response.statusCode, JSON.stringify(response.body)).to.equal(201);
    return String(response.body.subjectToken);
  }

  describe('the management API', () => {
    it("is refused with 400 invalid_target saying why, for an administrator's API A token", async () => {
      const response = await exchangeFor(service.config.managementApiResource, 'all');
      expectOAuthError(response, 400, 'invalid_target', managementTarget);
    });

    it('is refused for an impersonation token, which stays unused', async () => {
      const token = await impersonationToken();
      const refused = await exchangeFor(service.config.managementApiResource, 'all', token, impersonationTokenType);
      expectOAuthError(refused, 400, 'invalid_target', managementTarget);

      const issued = expectIssued(
        await exchangeFor(setup.apiB.resource.indicator, 'read:b', token, impersonationTokenType),
      );
      expect(claimsOf(issued.access_token)).to.include({ aud: setup.apiB.resource.indicator, scope: 'read:b' });
    });

    it('is listed with isExchangeTarget: false, which cannot be switched on', async () => {
      const resource = await service.api.get('resources/management-api');
      expect(resource.statusCode).to.equal(200);
      expect(resource.body).to.include({ indicator: service.config.managementApiResource, isExchangeTarget: false });

      const switched = await service.api.patch('resources/management-api', { json: { isExchangeTarget: true } });
      expect(switched.statusCode, JSON.stringify(switched.body)).to.equal(400);
      expect(switched.body).to.include({ code: 'resource.cannot_modify_management_api' });
      expect((await service.api.get('resources/management-api')).body).to.include({ isExchangeTarget: false });
      expectOAuthError(
        await exchangeFor(service.config.managementApiResource, 'all'),
        400,
        'invalid_target',
        managementTarget,
      );
    });
  });

  describe('a resource marked isExchangeTarget: false', () => {
    it('is created with the flag, refused as a target, and accepted again once the flag is switched on', async () => {
      const indicator = `https://internal-${Date.now().toString(36)}.example.com`;
      const created = await service.api.post('resources', {
        json: { name: 'Internal API', indicator, isExchangeTarget: false },
      });
      expect(created.statusCode, JSON.stringify(created.body)).to.equal(201);
      expect(created.body).to.include({ indicator, isExchangeTarget: false });
      const scope = await service.api.post(`resources/${created.body.id}/scopes`, { json: { name: 'read:internal' } });
      expect(scope.statusCode).to.equal(201);
      expect(
        (await service.api.post(`roles/${setup.role.id}/scopes`, { json: { scopeIds: [scope.body.id] } })).statusCode,
      ).to.equal(201);

      const refused = await exchangeFor(indicator, 'read:internal');
      expectOAuthError(refused, 400, 'invalid_target', notATarget);
      expect(String(refused.body.error_description)).to.include(indicator);

      const patched = await service.api.patch(`resources/${created.body.id}`, { json: { isExchangeTarget: true } });
      expect(patched.statusCode, JSON.stringify(patched.body)).to.equal(200);
      expect(patched.body).to.include({ isExchangeTarget: true });
      const issued = expectIssued(await exchangeFor(indicator, 'read:internal'));
      expect(claimsOf(issued.access_token)).to.include({ aud: indicator, scope: 'read:internal' });

      const back = await service.api.patch(`resources/${created.body.id}`, { json: { isExchangeTarget: false } });
      expect(back.body).to.include({ isExchangeTarget: false });
      expectOAuthError(await exchangeFor(indicator, 'read:internal'), 400, 'invalid_target', notATarget);
    });

    it('still issues client credentials tokens for it: the flag is about token exchange only', async () => {
      const indicator = `https://machines-${Date.now().toString(36)}.example.com`;
      const created = await service.api.post('resources', {
        json: { name: 'Machines only', indicator, isExchangeTarget: false },
      });
      const scope = await service.api.post(`resources/${created.body.id}/scopes`, { json: { name: 'run' } });
      const { application } = await createMachineWithScopes(service, [scope.body.id]);
      const response = await service.token(application.id, application.secret, {
        grant_type: 'client_credentials',
        resource: indicator,
        scope: 'run',
      });
      expect(response.statusCode, JSON.stringify(response.body)).to.equal(200);
      expect(claimsOf(String(response.body.access_token))).to.include({ aud: indicator, scope: 'run' });
    });

    it('defaults to isExchangeTarget: true and refuses a flag that is not a boolean', async () => {
      const indicator = `https://plain-${Date.now().toString(36)}.example.com`;
      const created = await service.api.post('resources', { json: { name: 'Plain', indicator } });
      expect(created.body).to.include({ isExchangeTarget: true });
      const listed = await service.api.get('resources');
      expect(listed.body.find((resource: { id: string }) => resource.id === created.body.id)).to.include({
        isExchangeTarget: true,
      });

      const bad = await service.api.patch(`resources/${created.body.id}`, { json: { isExchangeTarget: 'no' } });
      expect(bad.statusCode).to.equal(400);
      expect(bad.body).to.include({ code: 'guard.invalid_input' });
    });
  });
});
