import { createHmac } from 'node:crypto';
import { expect } from 'chai';
import type { Knex } from 'knex';

import { hookEvents } from '../../lib/hooks/events.ts';
import { openDatabase } from '../../lib/storage/database.ts';
import { Browser } from '../experience/browser.ts';
import {
  createSpa,
  createUser,
  identify,
  latestCode,
  newEmail,
  openExperience,
  passwordVerification,
  redirectUri,
  sendCode,
  submitToApplication,
  verifyCode,
} from '../experience/experience-helpers.ts';
import { accountApi, type AccountCall } from '../support/account-api.ts';
import { eventually } from '../support/eventually.ts';
import { expectError, expectStatus } from '../support/expect.ts';
import { type HttpResponse, type Json, startService, type TestService } from '../support/service.ts';
import { ifSet, unique } from '../support/values.ts';
import { type Received, Receiver } from './receiver.ts';

/**
 * Which event each management endpoint and each end-user action emits (the specification's two
 * tables, listed in docs/webhooks.md, "Events"): exactly those events, once, only on success, with the payload fields.
 */

type Payload = Record<string, Json>;
type Delivered = { event: string; payload: Payload; request: Received };
type Observed<T> = { result: T; events: string[]; payloads: Payload[]; deliveries: Delivered[] };

const password = 'Granite-Kestrel-64';
const sorted = (values: string[]) => [...values].sort();

describe("hooks: which action emits which event (the specification's tables)", () => {
  let service: TestService;
  let receiver: Receiver;
  let db: Knex;
  let hook: { id: string; signingKey: string; events: string[] };
  let spa: { id: string };

  before(async () => {
    service = await startService({ env: { HOOKS_RETRY_SCHEDULE: '0.2,0.2' } });
    db = openDatabase(service.config.dbUrl);
    receiver = await Receiver.start();
    const created = await service.api.post('hooks', {
      json: { name: 'all events', events: [...hookEvents], config: { url: receiver.url } },
    });
    expectStatus(created, 201);
    hook = created.body;
    expect(sorted(hook.events)).to.deep.equal(sorted([...hookEvents]));
    expect(hookEvents).to.have.length(27);
    spa = await createSpa(service);
  });
  after(async () => {
    await ifSet(db)?.destroy();
    await ifSet(receiver)?.close();
    await ifSet(service)?.stop();
  });

  /**
   * Waits until every delivery of the hook is final. An action's events commit with its change (the
   * outbox), so once its answer is in, nothing more of it can arrive after that.
   */
  async function settle(): Promise<void> {
    await eventually(
      async () => {
        const open = await db('hook_deliveries')
          .where({ hook_id: hook.id })
          .whereIn('status', ['pending', 'delivering'])
          .count({ n: '*' });
        return Number(open[0].n) === 0;
      },
      10_000,
      'every delivery of the hook final',
    );
  }

  /** Runs `action` and returns the events the receiver got because of it (payloads parsed). */
  async function eventsOf<T>(action: () => Promise<T>): Promise<Observed<T>> {
    await settle();
    const before = receiver.requests.length;
    const result = await action();
    await settle();
    const deliveries = receiver.requests.slice(before).map((request) => {
      const payload = JSON.parse(request.body) as Payload;
      return { event: String(payload.event), payload, request };
    });
    return {
      result,
      events: deliveries.map((delivery) => delivery.event),
      payloads: deliveries.map((delivery) => delivery.payload),
      deliveries,
    };
  }

  /** Asserts exactly `expected` (in any order, each once) and returns the payloads by event. */
  function expectEvents(observed: Observed<unknown>, expected: string[]): Record<string, Payload> {
    expect(sorted(observed.events), `events: ${JSON.stringify(observed.events)}`).to.deep.equal(sorted(expected));
    const byEvent: Record<string, Payload> = {};
    for (const payload of observed.payloads) {
      expect(payload.hookId).to.equal(hook.id);
      expect(payload.createdAt).to.be.a('string');
      expect(new Date(payload.createdAt).toISOString()).to.equal(payload.createdAt);
      byEvent[payload.event] = payload;
    }
    return byEvent;
  }

  /** A management call observed: asserts its status and the events; returns the response and payloads. */
  async function management(
    call: () => Promise<HttpResponse>,
    status: number,
    expected: string[],
  ): Promise<{ response: HttpResponse; payloads: Record<string, Payload> }> {
    const observed = await eventsOf(call);
    expectStatus(observed.result, status);
    return { response: observed.result, payloads: expectEvents(observed, expected) };
  }

  /** The envelope of a data event of the management API. */
  function expectDataEvent(
    payload: Payload,
    fields: { path: string; method: string; status: number; matchedRoute: string; params?: Record<string, string> },
  ) {
    expect(payload, JSON.stringify(payload)).to.include({
      path: fields.path,
      method: fields.method,
      status: fields.status,
      matchedRoute: fields.matchedRoute,
    });
    expect(payload.path.startsWith('/api/')).to.equal(true);
    expect(payload.matchedRoute.startsWith('/api')).to.equal(false);
    if (fields.params) {
      expect(payload.params).to.deep.equal(fields.params);
    }
    expect(payload.ip).to.be.a('string').and.not.equal('');
    expect(payload.userAgent).to.be.a('string');
    expect(payload).to.have.property('data');
  }

  const api = () => service.api;
  const newUser = async (extra: Record<string, unknown> = {}) => {
    const response = await api().post('users', { json: { username: unique('hooked'), password, ...extra } });
    expectStatus(response, 200);
    return response.body as { id: string; username: string };
  };

  describe('management API: users', () => {
    it('POST /users → User.Created with the user as returned', async () => {
      const username = unique('created');
      const { response, payloads } = await management(
        () => api().post('users', { json: { username, password } }),
        200,
        ['User.Created'],
      );
      const payload = payloads['User.Created'];
      expectDataEvent(payload, { path: '/api/users', method: 'POST', status: 200, matchedRoute: '/users', params: {} });
      expect(payload.data.id).to.equal(response.body.id);
      expect(payload.data).to.deep.equal(response.body);
      expect(JSON.stringify(payload)).to.not.match(/passwordDigest|password_digest/);
    });

    for (const [suffix, body] of [
      ['', { name: 'Renamed' }],
      ['/custom-data', { customData: { plan: 'gold' } }],
      ['/profile', { profile: { nickname: 'nick' } }],
      ['/password', { password: 'Another-Long-Pass-77' }],
    ] as const) {
      it(`PATCH /users/:userId${suffix} → User.Data.Updated`, async () => {
        const user = await newUser();
        const { payloads } = await management(() => api().patch(`users/${user.id}${suffix}`, { json: body }), 200, [
          'User.Data.Updated',
        ]);
        const payload = payloads['User.Data.Updated'];
        expectDataEvent(payload, {
          path: `/api/users/${user.id}${suffix}`,
          method: 'PATCH',
          status: 200,
          matchedRoute: `/users/:userId${suffix}`,
          params: { userId: user.id },
        });
        expect(JSON.stringify(payload)).to.not.match(/passwordDigest|password_digest/);
      });
    }

    it('PATCH /users/:userId/is-suspended → User.SuspensionStatus.Updated (suspend and reactivate)', async () => {
      const user = await newUser();
      for (const isSuspended of [true, false]) {
        const { payloads } = await management(
          () => api().patch(`users/${user.id}/is-suspended`, { json: { isSuspended } }),
          200,
          ['User.SuspensionStatus.Updated'],
        );
        const payload = payloads['User.SuspensionStatus.Updated'];
        expectDataEvent(payload, {
          path: `/api/users/${user.id}/is-suspended`,
          method: 'PATCH',
          status: 200,
          matchedRoute: '/users/:userId/is-suspended',
          params: { userId: user.id },
        });
        expect(payload.data.isSuspended).to.equal(isSuspended);
      }
    });

    it('DELETE /users/:userId → User.Deleted with the deleted user', async () => {
      const user = await newUser();
      const shown = (await api().get(`users/${user.id}`)).body;
      const { payloads } = await management(() => api().delete(`users/${user.id}`), 204, ['User.Deleted']);
      const payload = payloads['User.Deleted'];
      expectDataEvent(payload, {
        path: `/api/users/${user.id}`,
        method: 'DELETE',
        status: 204,
        matchedRoute: '/users/:userId',
        params: { userId: user.id },
      });
      expect(payload.data).to.deep.equal(shown);
    });
  });

  describe('management API: roles and API permissions', () => {
    let resource: { id: string };
    const newScope = async () => {
      const response = await api().post(`resources/${resource.id}/scopes`, { json: { name: unique('read') } });
      expectStatus(response, 201);
      return response.body as { id: string; name: string };
    };
    const newRole = async (extra: Record<string, unknown> = {}) => {
      const response = await api().post('roles', { json: { name: unique('role'), description: 'a role', ...extra } });
      expectStatus(response, 200);
      return response.body as { id: string; name: string };
    };

    before(async () => {
      const indicator = `https://${unique('api').toLowerCase()}.example.com`;
      // Creating an API resource is not in the table: no event.
      const { response } = await management(
        () => api().post('resources', { json: { name: indicator, indicator } }),
        201,
        [],
      );
      resource = response.body;
    });

    it('POST /roles without scopeIds → Role.Created only', async () => {
      const { response, payloads } = await management(
        () => api().post('roles', { json: { name: unique('role'), description: 'd' } }),
        200,
        ['Role.Created'],
      );
      expectDataEvent(payloads['Role.Created'], {
        path: '/api/roles',
        method: 'POST',
        status: 200,
        matchedRoute: '/roles',
      });
      expect(payloads['Role.Created'].data).to.deep.equal(response.body);
    });

    it('POST /roles with empty scopeIds → Role.Created only', async () => {
      await management(
        () => api().post('roles', { json: { name: unique('role'), description: 'd', scopeIds: [] } }),
        200,
        ['Role.Created'],
      );
    });

    it('POST /roles with scopeIds → Role.Created and Role.Scopes.Updated (roleId at top level)', async () => {
      const scope = await newScope();
      const { response, payloads } = await management(
        () => api().post('roles', { json: { name: unique('role'), description: 'd', scopeIds: [scope.id] } }),
        200,
        ['Role.Created', 'Role.Scopes.Updated'],
      );
      expect(payloads['Role.Created'].data.id).to.equal(response.body.id);
      expect(payloads['Role.Scopes.Updated'].roleId).to.equal(response.body.id);
      expectDataEvent(payloads['Role.Scopes.Updated'], {
        path: '/api/roles',
        method: 'POST',
        status: 200,
        matchedRoute: '/roles',
      });
    });

    it('PATCH /roles/:id → Role.Data.Updated', async () => {
      const role = await newRole();
      const { payloads } = await management(
        () => api().patch(`roles/${role.id}`, { json: { description: 'changed' } }),
        200,
        ['Role.Data.Updated'],
      );
      expectDataEvent(payloads['Role.Data.Updated'], {
        path: `/api/roles/${role.id}`,
        method: 'PATCH',
        status: 200,
        matchedRoute: '/roles/:id',
        params: { id: role.id },
      });
      expect(payloads['Role.Data.Updated'].data.description).to.equal('changed');
    });

    it('POST /roles/:id/scopes and DELETE /roles/:id/scopes/:scopeId → Role.Scopes.Updated', async () => {
      const role = await newRole();
      const scope = await newScope();
      const added = await management(
        () => api().post(`roles/${role.id}/scopes`, { json: { scopeIds: [scope.id] } }),
        201,
        ['Role.Scopes.Updated'],
      );
      expect(added.payloads['Role.Scopes.Updated'].roleId).to.equal(role.id);
      expectDataEvent(added.payloads['Role.Scopes.Updated'], {
        path: `/api/roles/${role.id}/scopes`,
        method: 'POST',
        status: 201,
        matchedRoute: '/roles/:id/scopes',
        params: { id: role.id },
      });
      const removed = await management(() => api().delete(`roles/${role.id}/scopes/${scope.id}`), 204, [
        'Role.Scopes.Updated',
      ]);
      expect(removed.payloads['Role.Scopes.Updated'].roleId).to.equal(role.id);
      expectDataEvent(removed.payloads['Role.Scopes.Updated'], {
        path: `/api/roles/${role.id}/scopes/${scope.id}`,
        method: 'DELETE',
        status: 204,
        matchedRoute: '/roles/:id/scopes/:scopeId',
        params: { id: role.id, scopeId: scope.id },
      });
    });

    it('DELETE /roles/:id → Role.Deleted with the deleted role', async () => {
      const role = await newRole();
      const shown = (await api().get(`roles/${role.id}`)).body;
      const { payloads } = await management(() => api().delete(`roles/${role.id}`), 204, ['Role.Deleted']);
      expect(payloads['Role.Deleted'].data.id).to.equal(role.id);
      expect(payloads['Role.Deleted'].data).to.deep.include({ id: shown.id, name: shown.name });
      expectDataEvent(payloads['Role.Deleted'], {
        path: `/api/roles/${role.id}`,
        method: 'DELETE',
        status: 204,
        matchedRoute: '/roles/:id',
      });
    });

    it('POST, PATCH, DELETE /resources/:resourceId/scopes → Scope.Created, Scope.Data.Updated, Scope.Deleted', async () => {
      const created = await management(
        () => api().post(`resources/${resource.id}/scopes`, { json: { name: unique('write') } }),
        201,
        ['Scope.Created'],
      );
      const scope = created.response.body;
      expect(created.payloads['Scope.Created'].data).to.deep.equal(scope);
      expectDataEvent(created.payloads['Scope.Created'], {
        path: `/api/resources/${resource.id}/scopes`,
        method: 'POST',
        status: 201,
        matchedRoute: '/resources/:resourceId/scopes',
        params: { resourceId: resource.id },
      });
      const updated = await management(
        () => api().patch(`resources/${resource.id}/scopes/${scope.id}`, { json: { description: 'new' } }),
        200,
        ['Scope.Data.Updated'],
      );
      expect(updated.payloads['Scope.Data.Updated'].data.description).to.equal('new');
      expectDataEvent(updated.payloads['Scope.Data.Updated'], {
        path: `/api/resources/${resource.id}/scopes/${scope.id}`,
        method: 'PATCH',
        status: 200,
        matchedRoute: '/resources/:resourceId/scopes/:scopeId',
        params: { resourceId: resource.id, scopeId: scope.id },
      });
      const deleted = await management(() => api().delete(`resources/${resource.id}/scopes/${scope.id}`), 204, [
        'Scope.Deleted',
      ]);
      expect(deleted.payloads['Scope.Deleted'].data.id).to.equal(scope.id);
      expectDataEvent(deleted.payloads['Scope.Deleted'], {
        path: `/api/resources/${resource.id}/scopes/${scope.id}`,
        method: 'DELETE',
        status: 204,
        matchedRoute: '/resources/:resourceId/scopes/:scopeId',
      });
    });
  });

  describe('management API: organizations', () => {
    const newOrganization = async () => {
      const response = await api().post('organizations', { json: { name: unique('org') } });
      expectStatus(response, 201);
      return response.body as { id: string; name: string };
    };
    const newMachine = async () => {
      const response = await api().post('applications', { json: { name: unique('m2m'), type: 'MachineToMachine' } });
      expectStatus(response, 200);
      return response.body as { id: string };
    };
    const deltaKeys = ['addedUserIds', 'removedUserIds', 'addedApplicationIds', 'removedApplicationIds'];
    /** organizationId and exactly the given (non-empty) delta fields, at top level. */
    function expectMembership(payload: Payload, organizationId: string, deltas: Partial<Record<string, string[]>>) {
      expect(payload.organizationId).to.equal(organizationId);
      for (const key of deltaKeys) {
        if (deltas[key]) {
          expect(sorted(payload[key] ?? []), key).to.deep.equal(sorted(deltas[key]));
        } else {
          expect(payload, `${key} should be absent: ${JSON.stringify(payload)}`).to.not.have.property(key);
        }
      }
    }

    it('POST, PATCH, DELETE /organizations → Organization.Created, Data.Updated, Deleted', async () => {
      const created = await management(() => api().post('organizations', { json: { name: unique('org') } }), 201, [
        'Organization.Created',
      ]);
      const organization = created.response.body;
      expect(created.payloads['Organization.Created'].data).to.deep.equal(organization);
      expectDataEvent(created.payloads['Organization.Created'], {
        path: '/api/organizations',
        method: 'POST',
        status: 201,
        matchedRoute: '/organizations',
      });
      const updated = await management(
        () => api().patch(`organizations/${organization.id}`, { json: { description: 'desc' } }),
        200,
        ['Organization.Data.Updated'],
      );
      expect(updated.payloads['Organization.Data.Updated'].data.description).to.equal('desc');
      expectDataEvent(updated.payloads['Organization.Data.Updated'], {
        path: `/api/organizations/${organization.id}`,
        method: 'PATCH',
        status: 200,
        matchedRoute: '/organizations/:id',
        params: { id: organization.id },
      });
      const deleted = await management(() => api().delete(`organizations/${organization.id}`), 204, [
        'Organization.Deleted',
      ]);
      expect(deleted.payloads['Organization.Deleted'].data.id).to.equal(organization.id);
      expect(deleted.payloads['Organization.Deleted'].data.name).to.equal(organization.name);
      expectDataEvent(deleted.payloads['Organization.Deleted'], {
        path: `/api/organizations/${organization.id}`,
        method: 'DELETE',
        status: 204,
        matchedRoute: '/organizations/:id',
      });
    });

    it('POST, PUT /organizations/:id/users and DELETE …/users/:userId → Organization.Membership.Updated with the user deltas', async () => {
      const organization = await newOrganization();
      const [one, two, three] = [await newUser(), await newUser(), await newUser()];
      const added = await management(
        () => api().post(`organizations/${organization.id}/users`, { json: { userIds: [one.id, two.id] } }),
        201,
        ['Organization.Membership.Updated'],
      );
      const addedPayload = added.payloads['Organization.Membership.Updated'];
      expectMembership(addedPayload, organization.id, { addedUserIds: [one.id, two.id] });
      expectDataEvent(addedPayload, {
        path: `/api/organizations/${organization.id}/users`,
        method: 'POST',
        status: 201,
        matchedRoute: '/organizations/:id/users',
        params: { id: organization.id },
      });

      const replaced = await management(
        () => api().put(`organizations/${organization.id}/users`, { json: { userIds: [two.id, three.id] } }),
        204,
        ['Organization.Membership.Updated'],
      );
      expectMembership(replaced.payloads['Organization.Membership.Updated'], organization.id, {
        addedUserIds: [three.id],
        removedUserIds: [one.id],
      });
      expect(replaced.payloads['Organization.Membership.Updated'].matchedRoute).to.equal('/organizations/:id/users');

      // Adding a member again changes nothing for that member: only the new one is reported.
      const readded = await management(
        () => api().post(`organizations/${organization.id}/users`, { json: { userIds: [three.id, one.id] } }),
        201,
        ['Organization.Membership.Updated'],
      );
      expectMembership(readded.payloads['Organization.Membership.Updated'], organization.id, {
        addedUserIds: [one.id],
      });
      expect(
        (await api().delete(`organizations/${organization.id}/users/${one.id}`)).statusCode,
        'back to two and three',
      ).to.equal(204);

      const removed = await management(() => api().delete(`organizations/${organization.id}/users/${two.id}`), 204, [
        'Organization.Membership.Updated',
      ]);
      const removedPayload = removed.payloads['Organization.Membership.Updated'];
      expectMembership(removedPayload, organization.id, { removedUserIds: [two.id] });
      expectDataEvent(removedPayload, {
        path: `/api/organizations/${organization.id}/users/${two.id}`,
        method: 'DELETE',
        status: 204,
        matchedRoute: '/organizations/:id/users/:userId',
        params: { id: organization.id, userId: two.id },
      });
    });

    it('POST, PUT /organizations/:id/applications and DELETE …/applications/:applicationId → Organization.Membership.Updated with the application deltas', async () => {
      const organization = await newOrganization();
      const [one, two, three] = [await newMachine(), await newMachine(), await newMachine()];
      const added = await management(
        () =>
          api().post(`organizations/${organization.id}/applications`, { json: { applicationIds: [one.id, two.id] } }),
        201,
        ['Organization.Membership.Updated'],
      );
      expectMembership(added.payloads['Organization.Membership.Updated'], organization.id, {
        addedApplicationIds: [one.id, two.id],
      });
      expect(added.payloads['Organization.Membership.Updated'].matchedRoute).to.equal(
        '/organizations/:id/applications',
      );

      const replaced = await management(
        () =>
          api().put(`organizations/${organization.id}/applications`, {
            json: { applicationIds: [two.id, three.id] },
          }),
        204,
        ['Organization.Membership.Updated'],
      );
      expectMembership(replaced.payloads['Organization.Membership.Updated'], organization.id, {
        addedApplicationIds: [three.id],
        removedApplicationIds: [one.id],
      });

      const removed = await management(
        () => api().delete(`organizations/${organization.id}/applications/${two.id}`),
        204,
        ['Organization.Membership.Updated'],
      );
      const payload = removed.payloads['Organization.Membership.Updated'];
      expectMembership(payload, organization.id, { removedApplicationIds: [two.id] });
      expectDataEvent(payload, {
        path: `/api/organizations/${organization.id}/applications/${two.id}`,
        method: 'DELETE',
        status: 204,
        matchedRoute: '/organizations/:id/applications/:applicationId',
        params: { id: organization.id, applicationId: two.id },
      });
    });

    it('PUT /organization-invitations/:id/status: Accepted → Organization.Membership.Updated (addedUserIds); creating and Revoked → nothing', async () => {
      const organization = await newOrganization();
      const inviteeEmail = `${unique('guest')}@example.com`;
      const invitee = await newUser({ primaryEmail: inviteeEmail });
      const invite = (invitee = inviteeEmail) =>
        api().post('organization-invitations', {
          json: { invitee, organizationId: organization.id, expiresAt: Date.now() + 3_600_000 },
        });
      const first = await management(() => invite(), 201, []);
      const accepted = await management(
        () =>
          api().put(`organization-invitations/${first.response.body.id}/status`, {
            json: { status: 'Accepted', acceptedUserId: invitee.id },
          }),
        200,
        ['Organization.Membership.Updated'],
      );
      const payload = accepted.payloads['Organization.Membership.Updated'];
      expectMembership(payload, organization.id, { addedUserIds: [invitee.id] });
      expectDataEvent(payload, {
        path: `/api/organization-invitations/${first.response.body.id}/status`,
        method: 'PUT',
        status: 200,
        matchedRoute: '/organization-invitations/:id/status',
      });

      const second = await management(() => invite(`${unique('other')}@example.com`), 201, []);
      await management(
        () => api().put(`organization-invitations/${second.response.body.id}/status`, { json: { status: 'Revoked' } }),
        200,
        [],
      );
    });

    it('organization roles: POST (with and without scopes), PATCH, DELETE and their scope routes', async () => {
      const scope = (await api().post('organization-scopes', { json: { name: unique('oscope') } })).body as {
        id: string;
      };
      const other = (await api().post('organization-scopes', { json: { name: unique('oscope') } })).body as {
        id: string;
      };

      const plain = await management(() => api().post('organization-roles', { json: { name: unique('orole') } }), 201, [
        'OrganizationRole.Created',
      ]);
      const role = plain.response.body;
      expect(plain.payloads['OrganizationRole.Created'].data).to.deep.equal(role);
      expectDataEvent(plain.payloads['OrganizationRole.Created'], {
        path: '/api/organization-roles',
        method: 'POST',
        status: 201,
        matchedRoute: '/organization-roles',
      });

      const scoped = await management(
        () => api().post('organization-roles', { json: { name: unique('orole'), organizationScopeIds: [scope.id] } }),
        201,
        ['OrganizationRole.Created', 'OrganizationRole.Scopes.Updated'],
      );
      expect(scoped.payloads['OrganizationRole.Scopes.Updated'].organizationRoleId).to.equal(scoped.response.body.id);

      const updated = await management(
        () => api().patch(`organization-roles/${role.id}`, { json: { description: 'changed' } }),
        200,
        ['OrganizationRole.Data.Updated'],
      );
      expectDataEvent(updated.payloads['OrganizationRole.Data.Updated'], {
        path: `/api/organization-roles/${role.id}`,
        method: 'PATCH',
        status: 200,
        matchedRoute: '/organization-roles/:id',
        params: { id: role.id },
      });

      const put = await management(
        () => api().put(`organization-roles/${role.id}/scopes`, { json: { organizationScopeIds: [scope.id] } }),
        204,
        ['OrganizationRole.Scopes.Updated'],
      );
      expect(put.payloads['OrganizationRole.Scopes.Updated'].organizationRoleId).to.equal(role.id);
      expect(put.payloads['OrganizationRole.Scopes.Updated'].matchedRoute).to.equal('/organization-roles/:id/scopes');
      expect(put.payloads['OrganizationRole.Scopes.Updated'].method).to.equal('PUT');

      const posted = await management(
        () => api().post(`organization-roles/${role.id}/scopes`, { json: { organizationScopeIds: [other.id] } }),
        201,
        ['OrganizationRole.Scopes.Updated'],
      );
      expect(posted.payloads['OrganizationRole.Scopes.Updated'].organizationRoleId).to.equal(role.id);
      expect(posted.payloads['OrganizationRole.Scopes.Updated'].method).to.equal('POST');

      const removed = await management(() => api().delete(`organization-roles/${role.id}/scopes/${other.id}`), 204, [
        'OrganizationRole.Scopes.Updated',
      ]);
      const payload = removed.payloads['OrganizationRole.Scopes.Updated'];
      expect(payload.organizationRoleId).to.equal(role.id);
      expectDataEvent(payload, {
        path: `/api/organization-roles/${role.id}/scopes/${other.id}`,
        method: 'DELETE',
        status: 204,
        matchedRoute: '/organization-roles/:id/scopes/:organizationScopeId',
        params: { id: role.id, organizationScopeId: other.id },
      });

      const deleted = await management(() => api().delete(`organization-roles/${role.id}`), 204, [
        'OrganizationRole.Deleted',
      ]);
      expect(deleted.payloads['OrganizationRole.Deleted'].data.id).to.equal(role.id);
      expectDataEvent(deleted.payloads['OrganizationRole.Deleted'], {
        path: `/api/organization-roles/${role.id}`,
        method: 'DELETE',
        status: 204,
        matchedRoute: '/organization-roles/:id',
      });
    });

    it('POST, PATCH, DELETE /organization-scopes → OrganizationScope.Created, Data.Updated, Deleted', async () => {
      const created = await management(
        () => api().post('organization-scopes', { json: { name: unique('oscope') } }),
        201,
        ['OrganizationScope.Created'],
      );
      const scope = created.response.body;
      expect(created.payloads['OrganizationScope.Created'].data).to.deep.equal(scope);
      expectDataEvent(created.payloads['OrganizationScope.Created'], {
        path: '/api/organization-scopes',
        method: 'POST',
        status: 201,
        matchedRoute: '/organization-scopes',
      });
      const updated = await management(
        () => api().patch(`organization-scopes/${scope.id}`, { json: { description: 'changed' } }),
        200,
        ['OrganizationScope.Data.Updated'],
      );
      expect(updated.payloads['OrganizationScope.Data.Updated'].data.description).to.equal('changed');
      expect(updated.payloads['OrganizationScope.Data.Updated'].matchedRoute).to.equal('/organization-scopes/:id');
      const deleted = await management(() => api().delete(`organization-scopes/${scope.id}`), 204, [
        'OrganizationScope.Deleted',
      ]);
      expect(deleted.payloads['OrganizationScope.Deleted'].data.id).to.equal(scope.id);
      expectDataEvent(deleted.payloads['OrganizationScope.Deleted'], {
        path: `/api/organization-scopes/${scope.id}`,
        method: 'DELETE',
        status: 204,
        matchedRoute: '/organization-scopes/:id',
      });
    });
  });

  describe('failed requests emit nothing', () => {
    it('POST /users with a taken username (422), DELETE an unknown role (404), PATCH an unknown user (404), and more', async () => {
      const user = await newUser();
      const organization = (await api().post('organizations', { json: { name: unique('org') } })).body as {
        id: string;
      };
      const failures: Array<[() => Promise<HttpResponse>, number]> = [
        [() => api().post('users', { json: { username: user.username, password } }), 422],
        [() => api().delete('roles/no-such-role'), 404],
        [() => api().patch('users/no-such-user', { json: { name: 'x' } }), 404],
        [() => api().patch('users/no-such-user/is-suspended', { json: { isSuspended: true } }), 404],
        [() => api().delete('users/no-such-user'), 404],
        [() => api().post('organizations', { json: {} }), 400],
        [() => api().delete('organization-scopes/no-such-scope'), 404],
        [() => api().post(`organizations/${organization.id}/users`, { json: { userIds: ['no-such-user'] } }), 422],
      ];
      for (const [call, status] of failures) {
        const observed = await eventsOf(call);
        expect(observed.result.statusCode, JSON.stringify(observed.result.body)).to.equal(status);
        expect(observed.events, `${status} ${JSON.stringify(observed.result.body)}`).to.deep.equal([]);
      }
    });
  });

  describe('user-experience actions', () => {
    it('registration: User.Created at identification, PostRegister at submit, nothing else over the flow', async () => {
      await settle();
      const start = receiver.requests.length;
      const username = unique('registered');
      const browser = await openExperience(service, spa.id, 'Register');
      const identity = await eventsOf(() =>
        browser.call('post', 'api/experience/verification/new-password-identity', {
          identifier: { type: 'username', value: username },
          password,
        }),
      );
      expectStatus(identity.result, 200);
      expectEvents(identity, []);

      const identified = await eventsOf(() =>
        identify(browser, { verificationId: identity.result.body.verificationId }),
      );
      expectStatus(identified.result, 201);
      const created = expectEvents(identified, ['User.Created'])['User.Created'];
      expect(created.data.username).to.equal(username);
      expect(created.data.id).to.be.a('string');
      expect(JSON.stringify(created)).to.not.match(/passwordDigest|password_digest/);

      const submitted = await eventsOf(() => submitToApplication(browser));
      const registered = expectEvents(submitted, ['PostRegister'])['PostRegister'];
      expect(registered).to.include({ interactionEvent: 'Register', userId: created.data.id });
      expect(registered.user.id).to.equal(created.data.id);
      expect(registered.application.id).to.equal(spa.id);
      expect(registered.sessionId).to.be.a('string');
      expect(registered.userIp).to.be.a('string');
      expect(registered).to.have.property('userAgent');

      await settle();
      const union = new Set(receiver.requests.slice(start).map((request) => JSON.parse(request.body).event as string));
      expect(sorted([...union])).to.deep.equal(['PostRegister', 'User.Created']);
      expect(receiver.requests.length - start).to.equal(2);
    });

    it('sign-in: PostSignIn only, with the interaction fields', async () => {
      let uid = '';
      const user = await createUser(service, { username: unique('signer'), password });
      const observed = await eventsOf(async () => {
        const browser = await openExperience(service, spa.id);
        const verification = await passwordVerification(browser, { type: 'username', value: user.username! }, password);
        expectStatus(verification, 200);
        expectStatus(await identify(browser, { verificationId: verification.body.verificationId }), 204);
        const submitted = await browser.call('post', 'api/experience/submit');
        uid = String(submitted.body.redirectTo).split('/oidc/auth/')[1];
        await browser.followToApplication(submitted.body.redirectTo);
      });
      const payload = expectEvents(observed, ['PostSignIn'])['PostSignIn'];
      // The interaction's uid resumes the sign-in (with its cookie): it stays out of the payload.
      expect(uid).to.have.length.above(10);
      expect(JSON.stringify(payload)).not.to.include(uid);
      expect(payload).to.include({ interactionEvent: 'SignIn', userId: user.id });
      expect(payload.user.id).to.equal(user.id);
      expect(JSON.stringify(payload.user)).to.not.match(/passwordDigest|password_digest/);
      expect(payload.application.id).to.equal(spa.id);
      expect(payload.sessionId).to.be.a('string');
      expect(payload.userIp).to.be.a('string');
      expect(payload).to.have.property('userAgent');
    });

    it('password reset: User.Data.Updated and PostResetPassword at submit, nothing else over the flow', async () => {
      const email = newEmail('resetter');
      const user = await createUser(service, { primaryEmail: email, password });
      await settle();
      const start = receiver.requests.length;
      const browser = await openExperience(service, spa.id, 'ForgotPassword');
      const sent = await sendCode(browser, email, 'ForgotPassword');
      expectStatus(sent, 200);
      expectStatus(await verifyCode(browser, email, sent.body.verificationId, await latestCode(service, email)), 200);
      expectStatus(await identify(browser, { verificationId: sent.body.verificationId }), 204);
      expectStatus(
        await browser.call('put', 'api/experience/profile/password', { password: 'Fresh-Heron-Password-51' }),
        204,
      );
      const submitted = await eventsOf(() => browser.call('post', 'api/experience/submit'));
      expectStatus(submitted.result, 204);
      const payloads = expectEvents(submitted, ['User.Data.Updated', 'PostResetPassword']);
      expect(payloads['User.Data.Updated'].data.id).to.equal(user.id);
      expect(payloads['PostResetPassword']).to.include({ interactionEvent: 'ForgotPassword', userId: user.id });
      expect(payloads['PostResetPassword'].user.id).to.equal(user.id);
      expect(payloads['PostResetPassword'].application.id).to.equal(spa.id);

      await settle();
      expect(
        sorted(receiver.requests.slice(start).map((request) => JSON.parse(request.body).event as string)),
      ).to.deep.equal(['PostResetPassword', 'User.Data.Updated']);
    });

    describe('Account API', () => {
      let token: string;
      let userId: string;

      before(async () => {
        const username = unique('account');
        userId = (await createUser(service, { username, password })).id;
        const browser = new Browser(service);
        const { verifier } = await browser.authorize(spa.id, redirectUri, { scope: 'openid profile email phone' });
        expectStatus(await browser.call('put', 'api/experience', { interactionEvent: 'SignIn' }), 204);
        const verification = await passwordVerification(browser, { type: 'username', value: username }, password);
        expectStatus(await identify(browser, { verificationId: verification.body.verificationId }), 204);
        const landed = await submitToApplication(browser);
        const tokens = await service.http.post('oidc/token', {
          form: {
            grant_type: 'authorization_code',
            code: landed.searchParams.get('code')!,
            code_verifier: verifier,
            client_id: spa.id,
            redirect_uri: redirectUri,
          },
        });
        expectStatus(tokens, 200);
        token = tokens.body.access_token;
      });

      const call: AccountCall = (...args) => accountApi(service, token)(...args);

      for (const [kind, value] of [
        ['email', `${unique('linked')}@example.com`],
        ['phone', `1555${String(Date.now()).slice(-7)}`],
      ] as const) {
        it(`linking a ${kind}: User.Data.Updated, and nothing for the proofs and the code`, async () => {
          const steps = await eventsOf(async () => {
            const proof = await call('post', 'verifications/password', { password });
            expectStatus(proof, 201);
            const identifier = { type: kind, value };
            const sent = await call('post', 'verifications/verification-code', { identifier });
            expectStatus(sent, 201);
            const verified = await call('post', 'verifications/verification-code/verify', {
              identifier,
              verificationId: sent.body.verificationRecordId,
              code: await latestCode(service, value),
            });
            expectStatus(verified, 200);
            return {
              proof: proof.body.verificationRecordId as string,
              record: sent.body.verificationRecordId as string,
            };
          });
          expectEvents(steps, []);

          const linked = await eventsOf(() =>
            call(
              'post',
              `my-account/primary-${kind}`,
              { [kind]: value, newIdentifierVerificationRecordId: steps.result.record },
              steps.result.proof,
            ),
          );
          expectStatus(linked.result, 204);
          const payload = expectEvents(linked, ['User.Data.Updated'])['User.Data.Updated'];
          expect(payload.data.id).to.equal(userId);
          expect(payload.data[kind === 'email' ? 'primaryEmail' : 'primaryPhone']).to.equal(value);
          expect(JSON.stringify(payload)).to.not.match(/passwordDigest|password_digest/);
        });
      }

      it('the 11th code send to one recipient on the Account API: Message.RateLimited', async () => {
        const email = newEmail('accountlimit');
        const sends = await eventsOf(async () => {
          for (let index = 0; index < 10; index++) {
            expectStatus(
              await call('post', 'verifications/verification-code', { identifier: { type: 'email', value: email } }),
              201,
            );
          }
        });
        expectEvents(sends, []);
        const limited = await eventsOf(() =>
          call('post', 'verifications/verification-code', { identifier: { type: 'email', value: email } }),
        );
        expectError(limited.result, 429, 'request.message_rate_limited');
        const payload = expectEvents(limited, ['Message.RateLimited'])['Message.RateLimited'];
        expect(payload).to.include({ action: 'VerificationCodeSend', recipient: email.toLowerCase() });
      });
    });

    it('the 11th code send in the Experience API: Message.RateLimited {action, recipient}; the management send over the limit: nothing', async () => {
      const email = newEmail('limited');
      const browser = await openExperience(service, spa.id);
      const sends = await eventsOf(async () => {
        for (let index = 0; index < 10; index++) {
          expectStatus(await sendCode(browser, email, 'SignIn'), 200);
        }
      });
      expectEvents(sends, []);
      const limited = await eventsOf(() => sendCode(browser, email, 'SignIn'));
      expectError(limited.result, 429, 'request.message_rate_limited');
      const payload = expectEvents(limited, ['Message.RateLimited'])['Message.RateLimited'];
      expect(payload).to.include({ action: 'VerificationCodeSend', recipient: email.toLowerCase() });
      expect(payload).to.not.have.property('data');

      // The management API's send: refused over the limit, but no event.
      const management = await eventsOf(() => api().post('verification-codes', { json: { email } }));
      expectError(management.result, 429, 'request.message_rate_limited');
      expectEvents(management, []);

      const other = newEmail('managed');
      const managementSends = await eventsOf(async () => {
        for (let index = 0; index < 10; index++) {
          expectStatus(await api().post('verification-codes', { json: { email: other } }), 204);
        }
        return api().post('verification-codes', { json: { email: other } });
      });
      expectError(managementSends.result, 429, 'request.message_rate_limited');
      expectEvents(managementSends, []);
    });

    it('lockout: the failure that reaches maxAttempts emits one Identifier.Lockout {type, value}; attempts while locked emit nothing', async () => {
      const policy = await eventsOf(() =>
        api().patch('sign-in-exp', { json: { sentinelPolicy: { maxAttempts: 3, lockoutDuration: 1 } } }),
      );
      expectStatus(policy.result, 200);
      expectEvents(policy, []);
      const username = unique('locked');
      await createUser(service, { username, password });
      const identifier = { type: 'username' as const, value: username };
      const browser = await openExperience(service, spa.id);
      const wrong = () => passwordVerification(browser, identifier, 'Not-The-Password-1');

      for (let attempt = 1; attempt <= 2; attempt++) {
        const failed = await eventsOf(wrong);
        expectError(failed.result, 422, 'session.invalid_credentials');
        expectEvents(failed, []);
      }
      const locking = await eventsOf(wrong);
      expectError(locking.result, 400, 'session.verification_blocked_too_many_attempts');
      const payload = expectEvents(locking, ['Identifier.Lockout'])['Identifier.Lockout'];
      expect(payload).to.include({ type: 'username', value: username });

      const whileLocked = await eventsOf(async () => {
        expectError(await wrong(), 400, 'session.verification_blocked_too_many_attempts');
        expectError(
          await passwordVerification(browser, identifier, password),
          400,
          'session.verification_blocked_too_many_attempts',
        );
        expectError(await wrong(), 400, 'session.verification_blocked_too_many_attempts');
      });
      expectEvents(whileLocked, []);
    });
  });

  describe('headers (after all the above)', () => {
    it('every delivery carries the Logto and Standard Webhooks signature headers', async () => {
      await settle();
      expect(receiver.requests.length).to.be.greaterThan(40);
      for (const request of receiver.requests) {
        expect(request.method).to.equal('POST');
        expect(request.headers['content-type']).to.match(/^application\/json/);
        const logto = request.headers['logto-signature-sha-256'];
        expect(logto).to.equal(createHmac('sha256', hook.signingKey).update(request.body).digest('hex'));
        const id = String(request.headers['webhook-id']);
        const timestamp = String(request.headers['webhook-timestamp']);
        expect(id).to.not.equal('undefined');
        expect(timestamp).to.match(/^\d+$/);
        const expected = createHmac('sha256', Buffer.from(hook.signingKey, 'utf8'))
          .update(`${id}.${timestamp}.${request.body}`)
          .digest('base64');
        expect(String(request.headers['webhook-signature']).split(' ')).to.include(`v1,${expected}`);
      }
      // Each event once: no delivery was repeated (every answer was 200).
      expect(new Set(receiver.ids).size).to.equal(receiver.requests.length);
    });
  });
});
