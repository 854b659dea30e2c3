import { expect } from 'chai';

import { expectError, expectStatus } from '../support/expect.ts';
import { startService, type TestService } from '../support/service.ts';
import { type Organization, organizationFixtures, type OrganizationRole } from './support.ts';

type EmailDomain = { tenantId: string; organizationId: string; emailDomain: string };

describe('management API: organization just-in-time provisioning', () => {
  let service: TestService;
  const fixtures = organizationFixtures(() => service);
  let organization: Organization;

  before(async () => {
    service = await startService();
  });
  after(() => service.stop());
  beforeEach(async () => {
    organization = await fixtures.createOrganization();
  });

  const domains = (id = organization.id) => `organizations/${id}/jit/email-domains`;
  const roles = (id = organization.id) => `organizations/${id}/jit/roles`;
  const domainNames = async () =>
    (await service.api.get<EmailDomain[]>(domains())).body.map(({ emailDomain }) => emailDomain);
  const roleIds = async () => (await service.api.get<OrganizationRole[]>(roles())).body.map(({ id }) => id).sort();

  describe('email domains', () => {
    it('POST adds a domain with 201 and the entity (lower-cased); GET lists with Total-Number', async () => {
      const response = await service.api.post<EmailDomain>(domains(), { json: { emailDomain: 'Example.COM' } });
      expectStatus(response, 201);
      expect(response.body).to.deep.equal({
        tenantId: response.body.tenantId,
        organizationId: organization.id,
        emailDomain: 'example.com',
      });
      await service.api.post(domains(), { json: { emailDomain: 'another.example.org' } });

      const listed = await service.api.get<EmailDomain[]>(domains());
      expectStatus(listed, 200);
      expect(listed.headers['total-number']).to.equal('2');
      expect(listed.body.map(({ emailDomain }) => emailDomain)).to.deep.equal(['another.example.org', 'example.com']);
      const page = await service.api.get<EmailDomain[]>(domains(), { searchParams: { page: 2, page_size: 1 } });
      expect(page.body.map(({ emailDomain }) => emailDomain)).to.deep.equal(['example.com']);
    });

    it('refuses a domain already there with 422, and invalid ones with 400', async () => {
      await service.api.post(domains(), { json: { emailDomain: 'dup.example.com' } });
      expectError(
        await service.api.post(domains(), { json: { emailDomain: 'DUP.example.com' } }),
        422,
        'entity.unique_integrity_violation',
      );
      for (const emailDomain of ['', 'no-dot', 'user@example.com', 'spa ce.com', '-bad.com', 'x'.repeat(129)]) {
        expectError(await service.api.post(domains(), { json: { emailDomain } }), 400, 'guard.invalid_input');
      }
      expectError(await service.api.post(domains(), { json: { emailDomains: ['a.com'] } }), 400, 'guard.invalid_input');
    });

    it('PUT replaces the domains with 204 (duplicates collapse); DELETE removes one with 204, 404 when absent', async () => {
      await service.api.post(domains(), { json: { emailDomain: 'old.example.com' } });
      expectStatus(
        await service.api.put(domains(), {
          json: { emailDomains: ['a.example.com', 'B.example.com', 'b.example.com'] },
        }),
        204,
      );
      expect(await domainNames()).to.deep.equal(['a.example.com', 'b.example.com']);

      expectStatus(await service.api.delete(`${domains()}/A.example.com`), 204);
      expect(await domainNames()).to.deep.equal(['b.example.com']);
      expectError(await service.api.delete(`${domains()}/a.example.com`), 404, 'entity.not_exists_with_id');

      expectStatus(await service.api.put(domains(), { json: { emailDomains: [] } }), 204);
      expect(await domainNames()).to.deep.equal([]);
    });

    it('answers 404 for an unknown organization', async () => {
      expectError(await service.api.get(domains('nope')), 404, 'entity.not_exists_with_id');
      expectError(
        await service.api.post(domains('nope'), { json: { emailDomain: 'a.com' } }),
        404,
        'entity.not_exists_with_id',
      );
      expectError(
        await service.api.put(domains('nope'), { json: { emailDomains: [] } }),
        404,
        'entity.not_exists_with_id',
      );
      expectError(await service.api.delete(`${domains('nope')}/a.com`), 404, 'entity.not_exists_with_id');
    });
  });

  describe('roles', () => {
    it('POST adds roles with 201 (existing ignored); GET lists them; PUT replaces (204); DELETE removes (204)', async () => {
      const [a, b, c] = [await fixtures.createRole(), await fixtures.createRole(), await fixtures.createRole()];
      expectStatus(await service.api.post(roles(), { json: { organizationRoleIds: [a.id, b.id] } }), 201);
      expectStatus(await service.api.post(roles(), { json: { organizationRoleIds: [a.id] } }), 201);
      const listed = await service.api.get<OrganizationRole[]>(roles());
      expectStatus(listed, 200);
      expect(listed.headers['total-number']).to.equal('2');
      expect(listed.body).to.have.deep.members([a, b]);

      expectStatus(await service.api.put(roles(), { json: { organizationRoleIds: [b.id, c.id] } }), 204);
      expect(await roleIds()).to.deep.equal([b.id, c.id].sort());
      expectStatus(await service.api.delete(`${roles()}/${b.id}`), 204);
      expect(await roleIds()).to.deep.equal([c.id]);
      expectError(await service.api.delete(`${roles()}/${b.id}`), 404, 'entity.not_exists_with_id');
    });

    it('refuses unknown roles (422), MachineToMachine roles (422), bad bodies (400) and unknown organizations (404)', async () => {
      const machine = await fixtures.createRole({ type: 'MachineToMachine' });
      expectError(
        await service.api.post(roles(), { json: { organizationRoleIds: ['nope'] } }),
        422,
        'entity.relation_foreign_key_not_found',
      );
      expectError(
        await service.api.put(roles(), { json: { organizationRoleIds: [machine.id] } }),
        422,
        'entity.db_constraint_violated',
      );
      expectError(await service.api.post(roles(), { json: { organizationRoleIds: [] } }), 400, 'guard.invalid_input');
      expectError(await service.api.get(roles('nope')), 404, 'entity.not_exists_with_id');
      expect(await roleIds()).to.deep.equal([]);
    });

    it('deleting a role removes it from the JIT roles', async () => {
      const role = await fixtures.createRole();
      await service.api.post(roles(), { json: { organizationRoleIds: [role.id] } });
      expectStatus(await service.api.delete(`organization-roles/${role.id}`), 204);
      expect(await roleIds()).to.deep.equal([]);
    });
  });
});
