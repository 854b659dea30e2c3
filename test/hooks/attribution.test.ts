import { expect } from 'chai';

import { identify, openExperience, type SignInSetting, startSignInSetting } from '../experience/experience-helpers.ts';
import { eventually } from '../support/eventually.ts';
import { expectStatus } from '../support/expect.ts';
import { createApplication } from '../support/fixtures.ts';
import { unique } from '../support/values.ts';
import { type Received, Receiver } from './receiver.ts';
import { createHook, deliveryRows, type HooksService, startHooksService } from './support.ts';

describe('hooks: actor, excluded applications and thin payloads', () => {
  let service: HooksService;
  let receiver: Receiver;
  let sync: { id: string; token: string };

  before(async () => {
    service = await startHooksService();
    receiver = await Receiver.start();
    // A sync service: a machine-to-machine application with its own management token.
    const application = await createApplication(service, 'MachineToMachine');
    await service.api.post(`applications/${application.id}/roles`, { json: { roleIds: ['management-api-access'] } });
    const response = await fetch(`${service.url}/oidc/token`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(`${application.id}:${application.secret}`).toString('base64')}` },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        resource: service.config.managementApiResource,
        scope: 'all',
      }),
    });
    sync = { id: application.id, token: ((await response.json()) as { access_token: string }).access_token };
  });
  after(async () => {
    await receiver.close();
    await service.stop();
  });

  const createUserAs = async (token: string | undefined) => {
    const username = unique('user').replace(/\W/g, '_');
    const response = await service.api.post('users', {
      json: { username },
      ...(token && { headers: { authorization: `Bearer ${token}` } }),
    });
    expect(response.statusCode).to.equal(200);
    return response.body as { id: string };
  };

  const deliveredTo = (hookId: string, userId: string) =>
    eventually<Received>(
      () => receiver.requests.find((request) => request.body.includes(hookId) && request.body.includes(userId)),
      15_000,
      `delivery of ${userId} to ${hookId}`,
    );

  it('data events name their actor; a hook does not receive what an excluded application caused', async () => {
    const filtered = await createHook(service, receiver.url, ['User.Created'], { excludeApplicationIds: [sync.id] });
    expect(filtered).to.deep.include({ excludeApplicationIds: [sync.id] });
    expect((await service.api.get(`hooks/${filtered.id}`)).body).to.deep.include({ excludeApplicationIds: [sync.id] });
    const all = await createHook(service, receiver.url, ['User.Created']);

    const bySync = await createUserAs(sync.token);
    const byAdmin = await createUserAs(undefined);

    // The outbox rows are written with the change: the filtered hook has the admin's event only.
    const rows = await deliveryRows(service, filtered.id);
    expect(rows.map((row) => (JSON.parse(row.payload) as { data: { id: string } }).data.id)).to.deep.equal([
      byAdmin.id,
    ]);
    const fromSync = JSON.parse((await deliveredTo(all.id, bySync.id)).body) as Record<string, unknown>;
    expect(fromSync.actor).to.deep.equal({ type: 'application', id: sync.id });
    const fromAdmin = JSON.parse((await deliveredTo(filtered.id, byAdmin.id)).body) as Record<string, unknown>;
    expect(fromAdmin.actor).to.deep.equal({ type: 'application', id: 'test-admin' });

    // Not excluded any more: the sync service's changes arrive again.
    const patched = await service.api.patch(`hooks/${filtered.id}`, { json: { excludeApplicationIds: [] } });
    expect(patched.body).to.deep.include({ excludeApplicationIds: [] });
    const again = await createUserAs(sync.token);
    await deliveredTo(filtered.id, again.id);
    await service.api.patch(`hooks/${filtered.id}`, { json: { enabled: false } });
    await service.api.patch(`hooks/${all.id}`, { json: { enabled: false } });
  });

  it('refuses a bad exclusion list (400 guard.invalid_input)', async () => {
    for (const excludeApplicationIds of ['app', [''], Array.from({ length: 101 }, (_, index) => `a${index}`)]) {
      const response = await service.api.post('hooks', {
        json: { events: ['User.Created'], config: { url: receiver.url }, excludeApplicationIds },
      });
      expect(response.statusCode, JSON.stringify(excludeApplicationIds).slice(0, 20)).to.equal(400);
      expect(response.body.code).to.equal('guard.invalid_input');
    }
  });

  it('a thin hook receives {hookId, event, createdAt, id, entityId, actor} and nothing personal', async () => {
    const thin = await createHook(service, receiver.url, ['User.Created'], { payload: 'thin' });
    expect(thin).to.deep.include({ payload: 'thin' });
    const user = await createUserAs(sync.token);
    const request = await eventually(
      () => receiver.requests.find((candidate) => candidate.body.includes(thin.id)),
      15_000,
      'the thin delivery',
    );
    const body = JSON.parse(request.body) as Record<string, unknown>;
    expect(Object.keys(body)).to.deep.equal(['hookId', 'event', 'createdAt', 'id', 'entityId', 'actor']);
    expect(body).to.deep.include({ hookId: thin.id, event: 'User.Created', id: request.headers['webhook-id'] });
    expect(body.entityId).to.equal(user.id);
    expect(body.actor).to.deep.equal({ type: 'application', id: sync.id });
    const full = await service.api.patch(`hooks/${thin.id}`, { json: { payload: 'full' } });
    expect(full.body).to.deep.include({ payload: 'full' });
    expect((await service.api.patch(`hooks/${thin.id}`, { json: { payload: 'slim' } })).statusCode).to.equal(400);
  });
});

describe('hooks: the actor of an end user’s change', () => {
  let setting: SignInSetting;

  before(async () => {
    setting = await startSignInSetting();
  });
  after(() => setting.stop());

  it('a registration’s User.Created names the new user as its actor', async () => {
    const browser = await openExperience(setting.service, setting.spa.id, 'Register');
    const identity = await browser.call('post', 'api/experience/verification/new-password-identity', {
      identifier: { type: 'username', value: unique('registered') },
      password: 'Quiet-Harbor-Lantern-82',
    });
    expectStatus(identity, 200);
    const { payloads } = await setting.events.expect(['User.Created'], () =>
      identify(browser, { verificationId: identity.body.verificationId }),
    );
    const [created] = payloads['User.Created'];
    expect(created.actor).to.deep.equal({ type: 'user', id: created.data.id });
  });
});
