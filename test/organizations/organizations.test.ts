import { expect } from 'chai';

import { expectError, expectStatus } from '../support/expect.ts';
import { startService, type TestService } from '../support/service.ts';
import { unique } from '../support/values.ts';
import { type Member, type Organization, organizationFixtures } from './support.ts';

type ListItem = Organization & {
  usersCount?: number;
  featuredUsers?: Array<{ id: string; avatar: string | null; name: string | null }>;
};

describe('management API: organizations', () => {
  let service: TestService;
  const fixtures = organizationFixtures(() => service);

  before(async () => {
    service = await startService();
  });
  after(() => service.stop());

  describe('POST /api/organizations', () => {
    it('creates an organization with 201 in Logto’s shape', async () => {
      const name = unique('Acme');
      const response = await service.api.post<Organization>('organizations', {
        json: { name, description: 'Makes anvils.', customData: { plan: 'gold' }, isMfaRequired: true },
      });
      expectStatus(response, 201);
      expect(response.body).to.have.all.keys(
        'tenantId',
        'id',
        'name',
        'description',
        'customData',
        'isMfaRequired',
        'color',
        'branding',
        'customCss',
        'createdAt',
      );
      expect(response.body).to.deep.include({
        name,
        description: 'Makes anvils.',
        customData: { plan: 'gold' },
        isMfaRequired: true,
        color: {},
        branding: {},
        customCss: null,
      });
      expect(response.body.createdAt).to.be.closeTo(Date.now(), 60_000);
      expect((await service.api.get<Organization>(`organizations/${response.body.id}`)).body).to.deep.equal(
        response.body,
      );
    });

    it('defaults description to null, customData to {} and isMfaRequired to false', async () => {
      const organization = await fixtures.createOrganization();
      expect(organization).to.deep.include({ description: null, customData: {}, isMfaRequired: false });
    });

    it('refuses bad bodies with 400 guard.invalid_input', async () => {
      for (const json of [
        {},
        { name: '' },
        { name: 'x'.repeat(129) },
        { name: 'a', unknown: 1 },
        { name: 'a', customData: [] },
        { name: 'a', isMfaRequired: 'yes' },
      ]) {
        expectError(await service.api.post('organizations', { json }), 400, 'guard.invalid_input');
      }
    });
  });

  describe('GET /api/organizations', () => {
    it('lists newest first with Total-Number, paginated with page and page_size', async () => {
      const prefix = unique('paged');
      const made: Organization[] = [];
      for (let index = 0; index < 3; index++) {
        made.push(await fixtures.createOrganization({ name: `${prefix}-${index}` }));
      }
      const all = await service.api.get<Organization[]>('organizations', { searchParams: { q: prefix } });
      expectStatus(all, 200);
      expect(all.headers['total-number']).to.equal('3');
      expect(all.body.map(({ id }) => id)).to.have.members(made.map(({ id }) => id));

      const second = await service.api.get<Organization[]>('organizations', {
        searchParams: { q: prefix, page: 2, page_size: 2 },
      });
      expectStatus(second, 200);
      expect(second.headers['total-number']).to.equal('3');
      expect(second.body).to.have.length(1);
      expect(all.body.map(({ id }) => id)).to.include(second.body[0].id);

      expectError(await service.api.get('organizations', { searchParams: { page: 0 } }), 400, 'guard.invalid_input');
    });

    it('searches ids, names and descriptions with q, case-insensitively', async () => {
      const word = unique('Zebra');
      const byName = await fixtures.createOrganization({ name: `${word} inc` });
      const byDescription = await fixtures.createOrganization({ description: `We love ${word.toLowerCase()}s` });
      await fixtures.createOrganization();

      const response = await service.api.get<Organization[]>('organizations', {
        searchParams: { q: word.toUpperCase() },
      });
      expect(response.body.map(({ id }) => id)).to.have.members([byName.id, byDescription.id]);

      const byId = await service.api.get<Organization[]>('organizations', { searchParams: { q: byName.id } });
      expect(byId.body.map(({ id }) => id)).to.deep.equal([byName.id]);
      // LIKE wildcards in q are literal characters.
      expect(
        (await service.api.get<Organization[]>('organizations', { searchParams: { q: '%_%' } })).body,
      ).to.deep.equal([]);
    });

    it('adds usersCount and featuredUsers with showFeatured=true', async () => {
      const organization = await fixtures.createOrganization({ name: unique('featured') });
      const empty = await fixtures.createOrganization({ name: `${organization.name}-empty` });
      const users = [
        await fixtures.createUser({ name: 'Ann' }),
        await fixtures.createUser(),
        await fixtures.createUser(),
        await fixtures.createUser(),
      ];
      await fixtures.addUsers(
        organization.id,
        users.map(({ id }) => id),
      );

      const response = await service.api.get<ListItem[]>('organizations', {
        searchParams: { q: organization.name, showFeatured: 'true' },
      });
      expectStatus(response, 200);
      const listed = response.body.find(({ id }) => id === organization.id)!;
      expect(listed.usersCount).to.equal(4);
      expect(listed.featuredUsers).to.have.length(3);
      for (const featured of listed.featuredUsers!) {
        expect(featured).to.have.all.keys('id', 'avatar', 'name');
        expect(users.map(({ id }) => id)).to.include(featured.id);
      }
      expect(response.body.find(({ id }) => id === empty.id)).to.deep.include({ usersCount: 0, featuredUsers: [] });

      const plain = await service.api.get<ListItem[]>('organizations', { searchParams: { q: organization.name } });
      expect(plain.body.find(({ id }) => id === organization.id)).to.not.have.any.keys('usersCount', 'featuredUsers');
    });
  });

  describe('GET, PATCH and DELETE /api/organizations/:id', () => {
    it('answers 404 entity.not_exists_with_id for an unknown organization', async () => {
      expectError(await service.api.get('organizations/nope'), 404, 'entity.not_exists_with_id');
      expectError(
        await service.api.patch('organizations/nope', { json: { name: 'x' } }),
        404,
        'entity.not_exists_with_id',
      );
      expectError(await service.api.delete('organizations/nope'), 404, 'entity.not_exists_with_id');
    });

    it('updates given fields with 200 and the entity; customData is replaced', async () => {
      const organization = await fixtures.createOrganization({ description: 'old', customData: { a: 1, b: 2 } });
      const response = await service.api.patch<Organization>(`organizations/${organization.id}`, {
        json: { customData: { c: 3 }, isMfaRequired: true },
      });
      expectStatus(response, 200);
      const expected = { ...organization, customData: { c: 3 }, isMfaRequired: true };
      expect(response.body).to.deep.equal(expected);

      const cleared = await service.api.patch<Organization>(`organizations/${organization.id}`, {
        json: { description: null, name: 'Renamed' },
      });
      expect(cleared.body).to.deep.equal({ ...expected, description: null, name: 'Renamed' });
      expect((await service.api.get<Organization>(`organizations/${organization.id}`)).body).to.deep.equal(
        cleared.body,
      );
    });

    it('refuses unknown or invalid fields with 400', async () => {
      const organization = await fixtures.createOrganization();
      expectError(
        await service.api.patch(`organizations/${organization.id}`, { json: { logo: {} } }),
        400,
        'guard.invalid_input',
      );
      expectError(
        await service.api.patch(`organizations/${organization.id}`, { json: { name: '' } }),
        400,
        'guard.invalid_input',
      );
    });

    it('deletes with 204, removing memberships, member roles, JIT settings and invitations', async () => {
      const organization = await fixtures.createOrganization();
      const user = await fixtures.createUser();
      const role = await fixtures.createRole();
      await fixtures.addUsers(organization.id, [user.id]);
      await fixtures.addUserRoles(organization.id, user.id, [role.id]);
      await service.api.post(`organizations/${organization.id}/jit/email-domains`, {
        json: { emailDomain: 'gone.example.com' },
      });
      const invitation = await service.api.post<{ id: string }>('organization-invitations', {
        json: { invitee: 'someone@example.com', organizationId: organization.id, expiresAt: Date.now() + 60_000 },
      });
      expectStatus(invitation, 201);

      const deleted = await service.api.delete(`organizations/${organization.id}`);
      expectStatus(deleted, 204);
      expect(deleted.body).to.equal('');

      expectError(await service.api.get(`organizations/${organization.id}`), 404, 'entity.not_exists_with_id');
      expectError(await service.api.get(`organizations/${organization.id}/users`), 404, 'entity.not_exists_with_id');
      expectError(
        await service.api.get(`organization-invitations/${invitation.body.id}`),
        404,
        'entity.not_exists_with_id',
      );
      const organizations = await service.api.get<unknown[]>(`users/${user.id}/organizations`);
      expectStatus(organizations, 200);
      expect(organizations.body).to.deep.equal([]);
      // The role and the user themselves remain.
      expectStatus(await service.api.get(`organization-roles/${role.id}`), 200);
      expectStatus(await service.api.get(`users/${user.id}`), 200);
    });
  });

  describe('GET /api/users/:userId/organizations', () => {
    it('lists the organizations of a user with their roles in each; 404 for an unknown user', async () => {
      const [first, second, other] = [
        await fixtures.createOrganization(),
        await fixtures.createOrganization(),
        await fixtures.createOrganization(),
      ];
      const user = await fixtures.createUser();
      const role = await fixtures.createRole();
      await fixtures.addUsers(first.id, [user.id]);
      await fixtures.addUsers(second.id, [user.id]);
      await fixtures.addUserRoles(second.id, user.id, [role.id]);

      const response = await service.api.get<Array<Organization & { organizationRoles: Member['organizationRoles'] }>>(
        `users/${user.id}/organizations`,
      );
      expectStatus(response, 200);
      expect(response.body.map(({ id }) => id))
        .to.have.members([first.id, second.id])
        .and.not.include(other.id);
      expect(response.body.find(({ id }) => id === first.id)!.organizationRoles).to.deep.equal([]);
      expect(response.body.find(({ id }) => id === second.id)).to.deep.equal({
        ...second,
        organizationRoles: [{ id: role.id, name: role.name }],
      });

      expectError(await service.api.get('users/nobody/organizations'), 404, 'entity.not_exists_with_id');
    });
  });
});
