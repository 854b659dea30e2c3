import { expect } from 'chai';

import { createApplication } from '../support/fixtures.ts';
import { startService, type TestService } from '../support/service.ts';
import { unique } from '../support/values.ts';

/** Issue #31, item 3: what Logto's application tests assert beyond the shapes. */
describe("management API: applications, Logto's rules", () => {
  let service: TestService;

  before(async () => {
    service = await startService();
  });
  after(() => service.stop());

  it('refuses a third-party machine-to-machine application with 400 application.invalid_third_party_application_type', async () => {
    const refused = await service.api.post('applications', {
      json: { name: unique('third'), type: 'MachineToMachine', isThirdParty: true },
    });
    expect(refused.statusCode).to.equal(400);
    expect(refused.body.code).to.equal('application.invalid_third_party_application_type');

    for (const type of ['Traditional', 'SPA', 'Native']) {
      const created = await service.api.post('applications', {
        json: { name: unique('third'), type, isThirdParty: true },
      });
      expect(created.statusCode, type).to.equal(200);
      expect(created.body.isThirdParty).to.equal(true);
    }
  });

  it('turns the management API role on and off with isAdmin', async () => {
    const machine = await createApplication(service, 'MachineToMachine');

    const on = await service.api.patch(`applications/${machine.id}`, { json: { isAdmin: true } });
    expect(on.statusCode, JSON.stringify(on.body)).to.equal(200);
    expect((await service.api.get(`applications/${machine.id}`)).body.isAdmin).to.equal(true);
    const again = await service.api.patch(`applications/${machine.id}`, { json: { isAdmin: true } });
    expect(again.statusCode).to.equal(200);
    const roles = await service.api.get(`applications/${machine.id}/roles`);
    expect(roles.body.map((role: { id: string }) => role.id)).to.deep.equal(['management-api-access']);

    const off = await service.api.patch(`applications/${machine.id}`, { json: { isAdmin: false } });
    expect(off.statusCode).to.equal(200);
    expect((await service.api.get(`applications/${machine.id}`)).body.isAdmin).to.equal(false);

    const spa = await createApplication(service, 'SPA');
    const refused = await service.api.patch(`applications/${spa.id}`, { json: { isAdmin: true } });
    expect(refused.statusCode).to.equal(422);
    expect(refused.body.code).to.equal('application.invalid_type');
  });

  it("accepts Logto's other types in the list filter, matching none of ours", async () => {
    const native = await createApplication(service, 'Native');
    const listed = await service.api.get('applications?types=Native&types=Traditional&types=Protected');
    expect(listed.statusCode).to.equal(200);
    expect(listed.body.map((app: { id: string }) => app.id)).to.include(native.id);
    const none = await service.api.get('applications?types=Protected&types=SAML');
    expect(none.statusCode).to.equal(200);
    expect(none.body).to.deep.equal([]);
  });

  it('leaves out the holders of a role (excludeRoleId) or the members of an organization (excludeOrganizationId)', async () => {
    const [holder, member, other] = await Promise.all([
      createApplication(service, 'MachineToMachine'),
      createApplication(service, 'MachineToMachine'),
      createApplication(service, 'MachineToMachine'),
    ]);
    const role = await service.api.post('roles', {
      json: { name: unique('role'), description: 'machines', type: 'MachineToMachine' },
    });
    await service.api.post(`applications/${holder.id}/roles`, { json: { roleIds: [role.body.id] } });
    const organization = await service.api.post('organizations', { json: { name: unique('org') } });
    await service.api.post(`organizations/${organization.body.id}/applications`, {
      json: { applicationIds: [member.id] },
    });
    const ids = async (query: string) =>
      (await service.api.get(`applications?page_size=100&${query}`)).body.map((app: { id: string }) => app.id);

    expect(await ids(`excludeRoleId=${role.body.id}`))
      .to.include.members([member.id, other.id])
      .and.not.include(holder.id);
    expect(await ids(`excludeOrganizationId=${organization.body.id}`))
      .to.include.members([holder.id, other.id])
      .and.not.include(member.id);

    const both = await service.api.get(
      `applications?excludeRoleId=${role.body.id}&excludeOrganizationId=${organization.body.id}`,
    );
    expect(both.statusCode).to.equal(400);
    expect(both.body.code).to.equal('request.invalid_input');
  });

  describe('PATCH /api/applications/:id/custom-data', () => {
    it('merges the keys given into custom data and answers the result', async () => {
      const app = await createApplication(service, 'SPA', { customData: { plan: 'free', seats: 1 } });

      const first = await service.api.patch(`applications/${app.id}/custom-data`, { json: { plan: 'pro' } });
      expect(first.statusCode).to.equal(200);
      expect(first.body).to.deep.equal({ plan: 'pro', seats: 1 });
      const second = await service.api.patch(`applications/${app.id}/custom-data`, { json: { test: 'foo' } });
      expect(second.body).to.deep.equal({ plan: 'pro', seats: 1, test: 'foo' });
      expect((await service.api.get(`applications/${app.id}`)).body.customData).to.deep.equal(second.body);

      // PATCH /applications/:id replaces it.
      await service.api.patch(`applications/${app.id}`, { json: { customData: {} } });
      expect((await service.api.get(`applications/${app.id}`)).body.customData).to.deep.equal({});
    });

    it('answers 404 for an unknown application and 400 for a body that is not an object', async () => {
      const missing = await service.api.patch('applications/no-such-app/custom-data', { json: { a: 1 } });
      expect(missing.statusCode).to.equal(404);
      expect(missing.body.code).to.equal('entity.not_exists_with_id');

      const app = await createApplication(service, 'SPA');
      const array = await service.api.patch(`applications/${app.id}/custom-data`, { json: [1, 2] });
      expect(array.statusCode).to.equal(400);
    });
  });
});
