import { expect } from 'chai';

import { adminClient, startService, type TestService } from '../support/service.ts';
import { ifSet } from '../support/values.ts';
import { administratorToken, type AuditEntry, waitForLog } from './support.ts';

const writes = { logKey: 'Management.Write' };

describe('audit: every management API write', () => {
  let service: TestService;

  before(async () => {
    service = await startService();
  });
  after(() => ifSet(service)?.stop());

  const byRoute = (method: string, route: string, status: number) => (entry: AuditEntry) =>
    entry.payload.method === method && entry.payload.route === route && entry.payload.status === status;

  it('records a write by an application: actor, method, route pattern, target ids, status, field names', async () => {
    const created = await service.api.post('users', {
      json: { username: 'trail_carol', password: 'Trail-Secret-Pass-1', name: 'Carol' },
    });
    expect(created.statusCode).to.equal(200);
    const userId = created.body.id as string;

    const creation = await waitForLog(service, writes, (entry) => entry.payload.createdId === userId);
    expect(creation.payload).to.deep.include({
      result: 'Success',
      method: 'POST',
      route: '/api/users',
      status: 200,
      applicationId: adminClient.id,
      createdId: userId,
      params: {},
    });
    expect(creation.payload.userId, 'an application acted: no user').to.equal(undefined);
    expect(creation.payload.fields).to.have.members(['username', 'password', 'name']);
    expect(creation.payload.ip).to.match(/127\.0\.0\.1/);

    expect((await service.api.patch(`users/${userId}`, { json: { name: 'Carol B.' } })).statusCode).to.equal(200);
    const update = await waitForLog(service, writes, byRoute('PATCH', '/api/users/:userId', 200));
    expect(update.payload).to.deep.include({
      result: 'Success',
      params: { userId },
      fields: ['name'],
      applicationId: adminClient.id,
    });

    // Ids named in the body are targets too (never other values).
    const role = (await service.api.post('roles', { json: { name: 'trail-readers', description: 'x' } })).body as {
      id: string;
    };
    expect((await service.api.post(`users/${userId}/roles`, { json: { roleIds: [role.id] } })).statusCode).to.equal(
      201,
    );
    const assignment = await waitForLog(
      service,
      { ...writes, targetId: role.id },
      byRoute('POST', '/api/users/:userId/roles', 201),
    );
    expect(assignment.payload).to.deep.include({
      params: { userId },
      fields: ['roleIds'],
      bodyIds: { roleIds: [role.id] },
    });
    expect(assignment.names).to.deep.include({ [userId]: 'trail_carol', [role.id]: 'trail-readers' });

    expect((await service.api.delete(`users/${userId}`)).statusCode).to.equal(204);
    const deletion = await waitForLog(service, writes, byRoute('DELETE', '/api/users/:userId', 204));
    expect(deletion.payload).to.deep.include({ result: 'Success', params: { userId } });
  });

  it('records refused writes with their status and error code', async () => {
    expect((await service.api.patch('users/no-such-user', { json: { name: 'x' } })).statusCode).to.equal(404);
    const missing = await waitForLog(service, writes, byRoute('PATCH', '/api/users/:userId', 404));
    expect(missing.payload).to.deep.include({
      result: 'Error',
      params: { userId: 'no-such-user' },
      error: { code: 'entity.not_exists_with_id' },
    });

    expect((await service.api.post('users', { json: { username: 'trail_dup' } })).statusCode).to.equal(200);
    expect((await service.api.post('users', { json: { username: 'trail_dup' } })).statusCode).to.equal(422);
    const duplicate = await waitForLog(service, writes, byRoute('POST', '/api/users', 422));
    expect(duplicate.payload).to.deep.include({ result: 'Error', error: { code: 'user.username_already_in_use' } });
    expect(duplicate.payload).to.not.have.property('createdId');

    expect((await service.api.post('roles', { json: { name: 42 } })).statusCode).to.equal(400);
    const invalid = await waitForLog(service, writes, byRoute('POST', '/api/roles', 400));
    expect(invalid.payload).to.deep.include({
      result: 'Error',
      error: { code: 'guard.invalid_input' },
      fields: ['name'],
    });
  });

  it("names the administrator when a console administrator's token wrote", async () => {
    const admin = { username: 'trail_admin', password: 'Trail-Admin-Pass-7' };
    const adminId = (await service.api.post('users', { json: admin })).body.id as string;
    expect(
      (await service.api.post(`users/${adminId}/roles`, { json: { roleIds: ['console-admin'] } })).statusCode,
    ).to.equal(201);
    const token = await administratorToken(service, admin);

    const created = await service.http.post('api/roles', {
      json: { name: 'trail-role', description: 'made by an administrator', type: 'User' },
      headers: { authorization: `Bearer ${token}` },
    });
    expect(created.statusCode).to.equal(200);
    const entry = await waitForLog(service, writes, (candidate) => candidate.payload.createdId === created.body.id);
    expect(entry.payload).to.deep.include({
      userId: adminId,
      applicationId: 'console',
      method: 'POST',
      route: '/api/roles',
      status: 200,
    });
    // Its names: the administrator's username, the console's name, the role's name.
    expect(entry.names).to.deep.include({
      [adminId]: 'trail_admin',
      console: 'Admin console',
      [created.body.id]: 'trail-role',
    });
  });

  it('names what each write created: resources, scopes, organizations and their roles and scopes, hooks, SSO connectors', async () => {
    const create = async (path: string, json: Record<string, unknown>, name: string) => {
      const response = await service.api.post(path, { json });
      expect(response.statusCode, JSON.stringify(response.body)).to.be.oneOf([200, 201]);
      const id = (response.body as { id: string }).id;
      const entry = await waitForLog(service, { ...writes, targetId: id }, (found) => found.payload.createdId === id);
      expect(entry.names[id], path).to.equal(name);
      return id;
    };
    const resourceId = await create(
      'resources',
      { name: 'Named API', indicator: 'https://named.example.com' },
      'Named API',
    );
    await create(`resources/${resourceId}/scopes`, { name: 'named:read' }, 'named:read');
    await create('organizations', { name: 'Named Org' }, 'Named Org');
    await create('organization-roles', { name: 'named-org-role' }, 'named-org-role');
    await create('organization-scopes', { name: 'named-org-scope' }, 'named-org-scope');
    await create(
      'hooks',
      { name: 'Named hook', events: ['User.Created'], config: { url: 'https://hooks.example.com' } },
      'Named hook',
    );
    await create('sso-connectors', { providerName: 'OIDC', connectorName: 'Named SSO' }, 'Named SSO');
  });

  it('does not record reads, nor requests without a valid token', async () => {
    expect((await service.api.get('users')).statusCode).to.equal(200);
    expect(
      (await service.http.post('api/roles', { json: { name: 'anonymous-role', description: 'x' } })).statusCode,
    ).to.equal(401);
    // A write after both: once it is in, the two before it would be too.
    expect((await service.api.post('roles', { json: { name: 'trail-marker', description: 'x' } })).statusCode).to.equal(
      200,
    );
    await waitForLog(service, writes, (entry) => entry.names[entry.payload.createdId] === 'trail-marker');
    const all = (await service.api.get('logs', { searchParams: { page_size: 100 } })).body as AuditEntry[];
    expect(all.filter((entry) => entry.payload.method === 'GET')).to.deep.equal([]);
    expect(all.filter((entry) => entry.payload.status === 401)).to.deep.equal([]);
  });
});
