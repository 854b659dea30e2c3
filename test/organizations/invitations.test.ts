import { expect } from 'chai';

import { openDatabase } from '../../lib/storage/database.ts';
import { expectError, expectStatus } from '../support/expect.ts';
import { startService, type TestService } from '../support/service.ts';
import { unique } from '../support/values.ts';
import { type Invitation, type Member, type Organization, organizationFixtures, type User } from './support.ts';

describe('management API: organization invitations', () => {
  let service: TestService;
  const fixtures = organizationFixtures(() => service);
  let organization: Organization;
  const inAnHour = () => Date.now() + 3_600_000;

  before(async () => {
    service = await startService();
  });
  after(() => service.stop());
  beforeEach(async () => {
    organization = await fixtures.createOrganization();
  });

  async function invite(body: Record<string, unknown> = {}): Promise<Invitation> {
    const response = await service.api.post<Invitation>('organization-invitations', {
      json: {
        invitee: `${unique('guest')}@example.com`,
        organizationId: organization.id,
        expiresAt: inAnHour(),
        ...body,
      },
    });
    expectStatus(response, 201);
    return response.body;
  }

  const setStatus = (id: string, json: Record<string, unknown>) =>
    service.api.put<Invitation>(`organization-invitations/${id}/status`, { json });

  /** Moves an invitation's expiry into the past, as time would. */
  async function expire(id: string): Promise<void> {
    const db = openDatabase(service.config.dbUrl);
    try {
      await db('organization_invitations')
        .where({ id })
        .update({ expires_at: Date.now() - 1000 });
    } finally {
      await db.destroy();
    }
  }

  describe('POST /api/organization-invitations', () => {
    it('creates a Pending invitation with 201, its roles as {id, name} by name', async () => {
      const inviter = await fixtures.createUser();
      const [zed, amy] = [
        await fixtures.createRole({ name: unique('zed') }),
        await fixtures.createRole({ name: unique('amy') }),
      ];
      const expiresAt = inAnHour();
      const response = await service.api.post<Invitation>('organization-invitations', {
        json: {
          inviterId: inviter.id,
          invitee: 'New.Person@Example.com',
          organizationId: organization.id,
          expiresAt,
          organizationRoleIds: [zed.id, amy.id],
          messagePayload: false,
        },
      });
      expectStatus(response, 201);
      expect(response.body).to.have.all.keys(
        'tenantId',
        'id',
        'inviterId',
        'invitee',
        'acceptedUserId',
        'organizationId',
        'status',
        'createdAt',
        'updatedAt',
        'expiresAt',
        'organizationRoles',
      );
      expect(response.body).to.deep.include({
        inviterId: inviter.id,
        invitee: 'New.Person@Example.com',
        acceptedUserId: null,
        organizationId: organization.id,
        status: 'Pending',
        expiresAt,
        organizationRoles: [
          { id: amy.id, name: amy.name },
          { id: zed.id, name: zed.name },
        ],
      });
      expect((await service.api.get(`organization-invitations/${response.body.id}`)).body).to.deep.equal(response.body);
    });

    it('refuses an expiresAt not in the future with 400 request.invalid_input', async () => {
      const response = await service.api.post('organization-invitations', {
        json: { invitee: 'late@example.com', organizationId: organization.id, expiresAt: Date.now() - 1 },
      });
      expectError(response, 400, 'request.invalid_input');
    });

    it('refuses bad bodies with 400', async () => {
      const valid = { invitee: 'a@example.com', organizationId: organization.id, expiresAt: inAnHour() };
      for (const json of [
        { ...valid, invitee: 'not-an-email' },
        { ...valid, expiresAt: 'soon' },
        { ...valid, extra: 1 },
        { invitee: 'a@example.com' },
      ]) {
        expectError(await service.api.post('organization-invitations', { json }), 400, 'guard.invalid_input');
      }
    });

    it('refuses unknown organizations (404), unknown inviters and roles (422), MachineToMachine roles (422)', async () => {
      const machine = await fixtures.createRole({ type: 'MachineToMachine' });
      const base = { invitee: 'x@example.com', expiresAt: inAnHour() };
      expectError(
        await service.api.post('organization-invitations', { json: { ...base, organizationId: 'nope' } }),
        404,
        'entity.not_exists_with_id',
      );
      const json = { ...base, organizationId: organization.id };
      expectError(
        await service.api.post('organization-invitations', { json: { ...json, inviterId: 'ghost' } }),
        422,
        'entity.relation_foreign_key_not_found',
      );
      expectError(
        await service.api.post('organization-invitations', { json: { ...json, organizationRoleIds: ['nope'] } }),
        422,
        'entity.relation_foreign_key_not_found',
      );
      expectError(
        await service.api.post('organization-invitations', { json: { ...json, organizationRoleIds: [machine.id] } }),
        422,
        'entity.db_constraint_violated',
      );
      const listed = await service.api.get<Invitation[]>('organization-invitations', {
        searchParams: { organizationId: organization.id },
      });
      expect(listed.body).to.deep.equal([]);
    });

    it('refuses to invite a member (by e-mail, whatever its case) with 422 request.invalid_input', async () => {
      const member = await fixtures.createUser();
      await fixtures.addUsers(organization.id, [member.id]);
      const response = await service.api.post('organization-invitations', {
        json: { invitee: member.primaryEmail!.toUpperCase(), organizationId: organization.id, expiresAt: inAnHour() },
      });
      expectError(response, 422, 'request.invalid_input');
    });

    it('allows one pending invitation per invitee and organization; a new one once the old has expired', async () => {
      const first = await invite({ invitee: 'twice@example.com' });
      expectError(
        await service.api.post('organization-invitations', {
          json: { invitee: 'TWICE@example.com', organizationId: organization.id, expiresAt: inAnHour() },
        }),
        422,
        'entity.unique_integrity_violation',
      );
      await invite({ invitee: 'twice@example.com', organizationId: (await fixtures.createOrganization()).id });

      await expire(first.id);
      const second = await invite({ invitee: 'twice@example.com' });
      expect(second.status).to.equal('Pending');
      expect((await service.api.get<Invitation>(`organization-invitations/${first.id}`)).body.status).to.equal(
        'Expired',
      );
    });
  });

  describe('GET and DELETE /api/organization-invitations', () => {
    it('lists newest first, filtered by organizationId, inviterId and invitee (case-insensitive), with Total-Number', async () => {
      const inviter = await fixtures.createUser();
      const other = await fixtures.createOrganization();
      const [a, b] = [await invite({ inviterId: inviter.id }), await invite()];
      const c = await invite({ organizationId: other.id, invitee: 'Filter.Me@example.com' });

      const byOrganization = await service.api.get<Invitation[]>('organization-invitations', {
        searchParams: { organizationId: organization.id },
      });
      expectStatus(byOrganization, 200);
      expect(byOrganization.headers['total-number']).to.equal('2');
      expect(byOrganization.body.map(({ id }) => id)).to.have.members([a.id, b.id]);

      const byInviter = await service.api.get<Invitation[]>('organization-invitations', {
        searchParams: { inviterId: inviter.id },
      });
      expect(byInviter.body.map(({ id }) => id)).to.deep.equal([a.id]);
      const byInvitee = await service.api.get<Invitation[]>('organization-invitations', {
        searchParams: { invitee: 'filter.me@EXAMPLE.com' },
      });
      expect(byInvitee.body.map(({ id }) => id)).to.deep.equal([c.id]);
      const all = await service.api.get<Invitation[]>('organization-invitations');
      expect(all.body.map(({ id }) => id)).to.include.members([a.id, b.id, c.id]);
    });

    it('gets one; deletes with 204; 404 for unknown ids', async () => {
      const invitation = await invite();
      expectStatus(await service.api.delete(`organization-invitations/${invitation.id}`), 204);
      expectError(await service.api.get(`organization-invitations/${invitation.id}`), 404, 'entity.not_exists_with_id');
      expectError(
        await service.api.delete(`organization-invitations/${invitation.id}`),
        404,
        'entity.not_exists_with_id',
      );
      expectError(await setStatus(invitation.id, { status: 'Revoked' }), 404, 'entity.not_exists_with_id');
    });
  });

  describe('PUT /api/organization-invitations/:id/status', () => {
    let invitee: User;
    beforeEach(async () => {
      invitee = await fixtures.createUser();
    });

    it('Accepted: the user joins with the invitation’s roles, and the invitation says so', async () => {
      const [admin, viewer] = [await fixtures.createRole(), await fixtures.createRole()];
      const invitation = await invite({
        invitee: invitee.primaryEmail!.toUpperCase(),
        organizationRoleIds: [admin.id, viewer.id],
      });

      const response = await setStatus(invitation.id, { status: 'Accepted', acceptedUserId: invitee.id });
      expectStatus(response, 200);
      expect(response.body).to.deep.include({
        status: 'Accepted',
        acceptedUserId: invitee.id,
        organizationRoles: invitation.organizationRoles,
      });
      expect(response.body.updatedAt).to.be.at.least(invitation.updatedAt);

      const members = await service.api.get<Member[]>(`organizations/${organization.id}/users`);
      expect(members.body.map(({ id }) => id)).to.deep.equal([invitee.id]);
      expect(members.body[0].organizationRoles.map(({ id }) => id)).to.have.members([admin.id, viewer.id]);

      expectError(await setStatus(invitation.id, { status: 'Revoked' }), 422, 'request.invalid_input');
      expectError(
        await setStatus(invitation.id, { status: 'Accepted', acceptedUserId: invitee.id }),
        422,
        'request.invalid_input',
      );
    });

    it('Accepted by a member already: their roles grow by the invitation’s', async () => {
      const [held, invited] = [await fixtures.createRole(), await fixtures.createRole()];
      const invitation = await invite({ invitee: invitee.primaryEmail, organizationRoleIds: [invited.id] });
      await fixtures.addUsers(organization.id, [invitee.id]);
      await fixtures.addUserRoles(organization.id, invitee.id, [held.id]);
      expectStatus(await setStatus(invitation.id, { status: 'Accepted', acceptedUserId: invitee.id }), 200);
      expect(await fixtures.roleIdsOfMember(organization.id, invitee.id)).to.deep.equal([held.id, invited.id].sort());
    });

    it('refuses an expired invitation with 422, which reads as Expired and adds nobody', async () => {
      const invitation = await invite({ invitee: invitee.primaryEmail });
      await expire(invitation.id);
      expect((await service.api.get<Invitation>(`organization-invitations/${invitation.id}`)).body.status).to.equal(
        'Expired',
      );
      const listed = await service.api.get<Invitation[]>('organization-invitations', {
        searchParams: { organizationId: organization.id },
      });
      expect(listed.body[0].status).to.equal('Expired');

      expectError(
        await setStatus(invitation.id, { status: 'Accepted', acceptedUserId: invitee.id }),
        422,
        'request.invalid_input',
      );
      expectError(await setStatus(invitation.id, { status: 'Revoked' }), 422, 'request.invalid_input');
      expect(await fixtures.memberIds(organization.id)).to.deep.equal([]);
    });

    it('refuses a user without the invited e-mail (422), an unknown user (404) and a missing acceptedUserId (422)', async () => {
      const stranger = await fixtures.createUser();
      const invitation = await invite({ invitee: invitee.primaryEmail });
      expectError(
        await setStatus(invitation.id, { status: 'Accepted', acceptedUserId: stranger.id }),
        422,
        'request.invalid_input',
      );
      expectError(
        await setStatus(invitation.id, { status: 'Accepted', acceptedUserId: 'ghost' }),
        404,
        'entity.not_exists_with_id',
      );
      expectError(await setStatus(invitation.id, { status: 'Accepted' }), 422, 'request.invalid_input');
      expect(await fixtures.memberIds(organization.id)).to.deep.equal([]);
      expect((await service.api.get<Invitation>(`organization-invitations/${invitation.id}`)).body.status).to.equal(
        'Pending',
      );
    });

    it('Revoked: final, nobody joins', async () => {
      const invitation = await invite({ invitee: invitee.primaryEmail });
      const revoked = await setStatus(invitation.id, { status: 'Revoked' });
      expectStatus(revoked, 200);
      expect(revoked.body).to.deep.include({ status: 'Revoked', acceptedUserId: null });
      expectError(
        await setStatus(invitation.id, { status: 'Accepted', acceptedUserId: invitee.id }),
        422,
        'request.invalid_input',
      );
      expect(await fixtures.memberIds(organization.id)).to.deep.equal([]);
    });

    it('refuses other statuses and unknown fields with 400', async () => {
      const invitation = await invite();
      for (const json of [{ status: 'Pending' }, { status: 'Expired' }, {}, { status: 'Revoked', reason: 'x' }]) {
        expectError(await setStatus(invitation.id, json), 400, 'guard.invalid_input');
      }
    });

    it('a deleted organization role leaves the invitations that granted it', async () => {
      const [kept, deleted] = [await fixtures.createRole(), await fixtures.createRole()];
      const invitation = await invite({ organizationRoleIds: [kept.id, deleted.id] });
      expectStatus(await service.api.delete(`organization-roles/${deleted.id}`), 204);
      expect(
        (await service.api.get<Invitation>(`organization-invitations/${invitation.id}`)).body.organizationRoles,
      ).to.deep.equal([{ id: kept.id, name: kept.name }]);
    });
  });
});
