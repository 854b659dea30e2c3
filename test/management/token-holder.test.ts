import { expect } from 'chai';
import { decodeJwt } from 'jose';

import { expectError } from '../support/expect.ts';
import { createApplication } from '../support/fixtures.ts';
import { startService, type TestService } from '../support/service.ts';
import { consoleSignIn } from '../support/sign-in.ts';
import { ifSet, unique } from '../support/values.ts';

const administratorRole = 'console-admin';
const managementRole = 'management-api-access';

/**
 * A management token is only as good as its holder: an administrator suspended, deleted or no
 * longer holding the role, or an application deleted or stripped of its role, is refused on the
 * next request, on every instance, although the JWT itself has not expired.
 */
describe('management API: a token stops working when its holder may no longer act', () => {
  let service: TestService;
  /** A second instance of the same deployment (same database, same ENDPOINT). */
  let other: TestService;

  before(async () => {
    service = await startService();
    other = await startService({ dbUrl: service.config.dbUrl, env: { ENDPOINT: service.config.endpoint } });
  });
  after(async () => {
    await ifSet(other)?.stop();
    await ifSet(service)?.stop();
  });

  const listApplications = (at: TestService, token: string) =>
    at.http.get('api/applications', { headers: { authorization: `Bearer ${token}` } });

  async function expectAccepted(at: TestService, token: string): Promise<void> {
    const response = await listApplications(at, token);
    expect(response.statusCode, JSON.stringify(response.body)).to.equal(200);
  }

  async function expectRefused(at: TestService, token: string, status: 401 | 403, code: string): Promise<void> {
    expectError(await listApplications(at, token), status, code);
  }

  /** A user made administrator through the management API, signed in at the console. */
  async function administrator(): Promise<{ id: string; token: string }> {
    const username = unique('admin');
    const password = 'Sturdy-Console-7';
    const user = await service.api.post('users', { json: { username, password } });
    expect(user.statusCode, JSON.stringify(user.body)).to.equal(200);
    expect(
      (await service.api.post(`users/${user.body.id}/roles`, { json: { roleIds: [administratorRole] } })).statusCode,
    ).to.equal(201);
    const { access_token: token } = await consoleSignIn(service, { username, password });
    expect(decodeJwt(token)).to.include({ sub: user.body.id, client_id: 'console', scope: 'all' });
    await expectAccepted(service, token);
    return { id: user.body.id, token };
  }

  /** A machine-to-machine application given the management role, with its client credentials token. */
  async function machine(): Promise<{ id: string; token: string }> {
    const application = await createApplication(service, 'MachineToMachine');
    expect(
      (await service.api.post(`applications/${application.id}/roles`, { json: { roleIds: [managementRole] } }))
        .statusCode,
    ).to.equal(201);
    const response = await service.token(application.id, application.secret, {
      grant_type: 'client_credentials',
      resource: service.config.managementApiResource,
      scope: 'all',
    });
    expect(response.statusCode, JSON.stringify(response.body)).to.equal(200);
    const token = String(response.body.access_token);
    expect(decodeJwt(token)).to.include({ sub: application.id, scope: 'all' });
    await expectAccepted(service, token);
    return { id: application.id, token };
  }

  describe('a user-bound token (the console administrator)', () => {
    it('is refused with 401 once the administrator is suspended, and works again when reinstated', async () => {
      const admin = await administrator();
      expect(
        (await service.api.patch(`users/${admin.id}/is-suspended`, { json: { isSuspended: true } })).statusCode,
      ).to.equal(200);
      await expectRefused(service, admin.token, 401, 'auth.unauthorized');

      expect(
        (await service.api.patch(`users/${admin.id}/is-suspended`, { json: { isSuspended: false } })).statusCode,
      ).to.equal(200);
      await expectAccepted(service, admin.token);
    });

    it('is refused with 401 once the administrator is deleted', async () => {
      const admin = await administrator();
      expect((await service.api.delete(`users/${admin.id}`)).statusCode).to.equal(204);
      await expectRefused(service, admin.token, 401, 'auth.unauthorized');
    });

    it('is refused with 403 once the administrator loses the administrator role', async () => {
      const admin = await administrator();
      expect((await service.api.delete(`users/${admin.id}/roles/${administratorRole}`)).statusCode).to.equal(204);
      await expectRefused(service, admin.token, 403, 'auth.forbidden');
    });

    it('is refused with 401 by the other instance on its next request after a suspension through this one', async () => {
      const admin = await administrator();
      await expectAccepted(other, admin.token);
      expect(
        (await service.api.patch(`users/${admin.id}/is-suspended`, { json: { isSuspended: true } })).statusCode,
      ).to.equal(200);
      await expectRefused(other, admin.token, 401, 'auth.unauthorized');
    });

    it('an administrator can suspend another administrator, whose token then stops', async () => {
      const first = await administrator();
      const second = await administrator();
      const suspend = await service.http.patch(`api/users/${second.id}/is-suspended`, {
        json: { isSuspended: true },
        headers: { authorization: `Bearer ${first.token}` },
      });
      expect(suspend.statusCode, JSON.stringify(suspend.body)).to.equal(200);
      await expectRefused(service, second.token, 401, 'auth.unauthorized');
      await expectAccepted(service, first.token);
    });
  });

  describe('an application-bound token (client credentials)', () => {
    it('is refused with 401 once the application is deleted', async () => {
      const application = await machine();
      expect((await service.api.delete(`applications/${application.id}`)).statusCode).to.equal(204);
      await expectRefused(service, application.token, 401, 'auth.unauthorized');
    });

    it('is refused with 403 once the management role is removed from the application', async () => {
      const application = await machine();
      expect((await service.api.delete(`applications/${application.id}/roles/${managementRole}`)).statusCode).to.equal(
        204,
      );
      await expectRefused(service, application.token, 403, 'auth.forbidden');
    });

    it('is refused by this instance on its next request after the role is removed through the other one', async () => {
      const application = await machine();
      await expectAccepted(other, application.token);
      expect((await other.api.delete(`applications/${application.id}/roles/${managementRole}`)).statusCode).to.equal(
        204,
      );
      await expectRefused(service, application.token, 403, 'auth.forbidden');
    });

    it('is refused by the other instance on its next request after the application is deleted through this one', async () => {
      const application = await machine();
      await expectAccepted(other, application.token);
      expect((await service.api.delete(`applications/${application.id}`)).statusCode).to.equal(204);
      await expectRefused(other, application.token, 401, 'auth.unauthorized');
    });
  });

  it('keeps the bootstrap administrator application working', async () => {
    const response = await service.api.get('applications');
    expect(response.statusCode).to.equal(200);
  });
});
