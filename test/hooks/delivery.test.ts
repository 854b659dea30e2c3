import { createHmac } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { Webhook } from 'standardwebhooks';

import { hooksCache, insertHook } from '../../lib/hooks/queries.ts';
import { generateId, generateSecret } from '../../lib/storage/ids.ts';
import { bumpCacheVersion } from '../../lib/storage/shared-cache.ts';
import { eventually } from '../support/eventually.ts';
import { type Received, Receiver } from './receiver.ts';
import { createHook, deleteAllHooks, deliveryRows, type HooksService, startHooksService } from './support.ts';

const verifyStandard = (signingKey: string, request: Received) =>
  new Webhook(`whsec_${Buffer.from(signingKey).toString('base64')}`).verify(
    request.body,
    request.headers as Record<string, string>,
  );

const logtoSignature = (signingKey: string, body: string) =>
  createHmac('sha256', signingKey).update(body).digest('hex');

describe('hooks: delivery', () => {
  let service: HooksService;
  let receiver: Receiver;

  before(async () => {
    service = await startHooksService({ env: { HOOKS_RETRY_SCHEDULE: '0.2,0.2,0.2' } });
  });
  beforeEach(async () => {
    receiver = await Receiver.start();
  });
  afterEach(async () => {
    await receiver.close();
    await deleteAllHooks(service);
  });
  after(async () => {
    await service.stop();
  });

  const statusOf = async (deliveryId: string) =>
    (await service.db('hook_deliveries').where({ id: deliveryId }).first())?.status as string;

  it('posts the envelope as JSON with the extra headers and both signatures', async () => {
    const hook = await createHook(service, receiver.url, ['User.Created'], {
      config: {
        url: receiver.url,
        headers: { 'x-team': 'identity', 'Content-Type': 'text/plain', 'webhook-id': 'forged' },
      },
    });
    const user = { id: 'u1', username: 'jane', primaryEmail: null, customData: { ü: 'ñ' } };
    const started = Date.now();
    await service.emit('User.Created', { data: user, path: '/api/users', method: 'POST', status: 200 });
    const [request] = await receiver.waitFor(1);
    const [row] = await deliveryRows(service, hook.id);

    expect(request.method).to.equal('POST');
    expect(request.url).to.equal('/hook');
    expect(request.headers['content-type']).to.equal('application/json');
    expect(request.headers['x-team']).to.equal('identity');
    expect(request.headers['webhook-id']).to.equal(row.id);
    expect(request.body).to.equal(row.payload);

    const payload = JSON.parse(request.body);
    expect(Object.keys(payload).slice(0, 3)).to.deep.equal(['hookId', 'event', 'createdAt']);
    expect(payload).to.deep.include({
      hookId: hook.id,
      event: 'User.Created',
      data: user,
      path: '/api/users',
      method: 'POST',
      status: 200,
    });
    expect(new Date(payload.createdAt).toISOString()).to.equal(payload.createdAt);
    expect(Date.parse(payload.createdAt)).to.be.within(started - 1000, Date.now());

    expect(request.headers['logto-signature-sha-256']).to.equal(logtoSignature(hook.signingKey, request.body));
    expect(verifyStandard(hook.signingKey, request)).to.deep.equal(payload);
    expect(Number(request.headers['webhook-timestamp'])).to.be.closeTo(Date.now() / 1000, 5);
    expect(String(request.headers['webhook-signature'])).to.match(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(() =>
      new Webhook(`whsec_${Buffer.from('other key').toString('base64')}`).verify(
        request.body,
        request.headers as Record<string, string>,
      ),
    ).to.throw();

    await eventually(async () => (await statusOf(row.id)) === 'succeeded', 5000, 'succeeded');
  });

  it('writes nothing when no enabled hook subscribes to the event', async () => {
    await createHook(service, receiver.url, ['Role.Created']);
    await createHook(service, receiver.url, ['User.Deleted'], { enabled: false });
    await service.emit('User.Deleted', { data: {} });
    await service.emit('PostSignIn', {});
    expect(await deliveryRows(service)).to.have.length(0);
  });

  it('fans an event out to every subscribed hook, each with its own webhook-id and key', async () => {
    const first = await createHook(service, receiver.url, ['Organization.Created']);
    const second = await createHook(service, receiver.url, ['Organization.Created', 'Organization.Deleted']);
    await service.emit('Organization.Created', { data: { id: 'o1' } });
    const requests = await receiver.waitFor(2);
    const byHook = new Map(requests.map((request) => [JSON.parse(request.body).hookId as string, request]));
    expect([...byHook.keys()].sort()).to.deep.equal([first.id, second.id].sort());
    expect(new Set(requests.map((request) => request.headers['webhook-id'])).size).to.equal(2);
    for (const hook of [first, second]) {
      expect(verifyStandard(hook.signingKey, byHook.get(hook.id)!)).to.have.property('hookId', hook.id);
    }
  });

  it('sends many requests at once without a warning on stderr', async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.name);
    process.on('warning', onWarning);
    try {
      await createHook(service, receiver.url, ['Organization.Created']);
      // Slow answers: all twenty are in flight together.
      receiver.answer = () => ({ status: 204, delayMs: 300 });
      await Promise.all(
        Array.from({ length: 20 }, (_, index) => service.emit('Organization.Created', { data: { id: `o${index}` } })),
      );
      await receiver.waitFor(20);
      await sleep(350);
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings).to.deep.equal([]);
  });

  it('retries 5xx with the same webhook-id until 2xx, with a fresh timestamp and a valid signature each time', async () => {
    const hook = await createHook(service, receiver.url, ['Role.Created']);
    receiver.answers.push({ status: 500, body: 'oops' }, { status: 502 });
    await service.emit('Role.Created', { data: { id: 'r1' } });
    const requests = await receiver.waitFor(3);
    await sleep(600);
    expect(receiver.requests).to.have.length(3);
    expect(new Set(requests.map((request) => request.headers['webhook-id'])).size).to.equal(1);
    for (const request of requests) {
      verifyStandard(hook.signingKey, request);
      expect(request.body).to.equal(requests[0].body);
    }
    // 0.2 s plus up to 20% between tries.
    expect(requests[1].receivedAt - requests[0].receivedAt).to.be.within(180, 1500);
    const [row] = await deliveryRows(service, hook.id);
    await eventually(async () => (await statusOf(row.id)) === 'succeeded', 5000, 'succeeded');
    expect((await service.db('hook_deliveries').where({ id: row.id }).first()).attempts).to.equal(3);
  });

  it('retries network errors, 408 and 429', async () => {
    await createHook(service, receiver.url, ['Scope.Deleted']);
    receiver.answers.push({ status: 408 }, { status: 429 });
    await service.emit('Scope.Deleted', { data: {} });
    await receiver.waitFor(3);
  });

  it('honours a Retry-After longer than the scheduled wait', async () => {
    await createHook(service, receiver.url, ['Scope.Created']);
    receiver.answers.push({ status: 503, headers: { 'retry-after': '2' } });
    await service.emit('Scope.Created', { data: {} });
    const requests = await receiver.waitFor(2, 10_000);
    expect(requests[1].receivedAt - requests[0].receivedAt).to.be.within(1900, 4000);
  });

  it('does not retry other 4xx: the delivery fails at once', async () => {
    const hook = await createHook(service, receiver.url, ['Role.Deleted']);
    receiver.answers.push({ status: 400, body: 'no thanks' });
    await service.emit('Role.Deleted', { data: {} });
    await receiver.waitFor(1);
    const [row] = await deliveryRows(service, hook.id);
    await eventually(async () => (await statusOf(row.id)) === 'failed', 5000, 'failed');
    await sleep(700);
    expect(receiver.requests).to.have.length(1);
    expect((await service.api.get(`hooks/${hook.id}`)).body.enabled).to.equal(true);
  });

  it('fails and disables the hook on 410 Gone', async () => {
    const hook = await createHook(service, receiver.url, ['Role.Data.Updated']);
    receiver.answers.push({ status: 410 });
    await service.emit('Role.Data.Updated', { data: {} });
    await receiver.waitFor(1);
    await eventually(
      async () => (await service.api.get(`hooks/${hook.id}`)).body.enabled === false,
      5000,
      'hook disabled',
    );
    const [row] = await deliveryRows(service, hook.id);
    expect(row.status).to.equal('failed');
    await service.emit('Role.Data.Updated', { data: {} });
    expect(await deliveryRows(service, hook.id)).to.have.length(1);
  });

  it('gives up when the schedule is exhausted; recent-logs shows every attempt; a resend delivers it', async () => {
    const hook = await createHook(service, receiver.url, ['User.Data.Updated']);
    receiver.answer = () => ({ status: 500, body: `x${'y'.repeat(20_000)}` });
    await service.emit('User.Data.Updated', { data: { id: 'u1' } });
    await receiver.waitFor(4);
    const [row] = await deliveryRows(service, hook.id);
    await eventually(async () => (await statusOf(row.id)) === 'failed', 5000, 'failed');
    await sleep(700);
    expect(receiver.requests).to.have.length(4);

    const logs = await service.api.get(`hooks/${hook.id}/recent-logs`);
    expect(logs.statusCode).to.equal(200);
    expect(logs.headers['total-number']).to.equal('4');
    expect(logs.body.map((entry: { payload: { attempt: number } }) => entry.payload.attempt)).to.deep.equal([
      4, 3, 2, 1,
    ]);
    const [latest] = logs.body;
    expect(Object.keys(latest).sort()).to.deep.equal(['createdAt', 'id', 'key', 'payload']);
    expect(latest.key).to.equal('TriggerHook.User.Data.Updated');
    expect(latest.createdAt).to.be.a('number');
    expect(latest.payload).to.include({
      key: 'TriggerHook.User.Data.Updated',
      hookId: hook.id,
      result: 'Error',
      attempt: 4,
      webhookId: row.id,
    });
    expect(latest.payload.durationMs).to.be.a('number');
    expect(latest.payload.response.statusCode).to.equal(500);
    expect(latest.payload.response.body).to.have.length(16_384);
    expect(Object.keys(latest.payload).sort()).to.deep.equal([
      'attempt',
      'durationMs',
      'error',
      'hookId',
      'key',
      'response',
      'result',
      'webhookId',
    ]);

    const paged = await service.api.get(`hooks/${hook.id}/recent-logs`, { searchParams: { page: 2, page_size: 3 } });
    expect(paged.body).to.have.length(1);
    expect(paged.body[0].payload.attempt).to.equal(1);
    const filtered = await service.api.get(`hooks/${hook.id}/recent-logs`, {
      searchParams: { logKey: 'TriggerHook.User.Created' },
    });
    expect(filtered.body).to.have.length(0);
    const old = await service.api.get(`hooks/${hook.id}/recent-logs`, { searchParams: { end_time: 1000 } });
    expect(old.body).to.have.length(0);

    receiver.answer = () => ({ status: 204 });
    const resend = await service.api.post(`hooks/${hook.id}/deliveries/${row.id}/resend`);
    expect(resend.statusCode).to.equal(204);
    const requests = await receiver.waitFor(5);
    expect(requests[4].headers['webhook-id']).to.equal(row.id);
    expect(requests[4].body).to.equal(requests[0].body);
    await eventually(async () => (await statusOf(row.id)) === 'succeeded', 5000, 'succeeded');
    const after = await service.api.get(`hooks/${hook.id}/recent-logs`);
    expect(after.body[0].payload).to.include({ result: 'Success', attempt: 1, webhookId: row.id });
    expect(after.body[0].payload).not.to.have.property('error');

    const again = await service.api.post(`hooks/${hook.id}/deliveries/${row.id}/resend`);
    expect(again.statusCode).to.equal(422);
    expect(again.body.code).to.equal('hook.delivery_not_failed');
    const unknown = await service.api.post(`hooks/${hook.id}/deliveries/nope/resend`);
    expect(unknown.statusCode).to.equal(404);
  });

  it("shows a JSON answer as JSON in recent-logs (Logto's form), and any other answer as text", async () => {
    const hook = await createHook(service, receiver.url, ['User.Data.Updated']);
    receiver.answers.push({ status: 200, body: JSON.stringify({ echoed: { id: 'u2' } }) }, { status: 200, body: 'ok' });
    await service.emit('User.Data.Updated', { data: { id: 'u2' } });
    await service.emit('User.Data.Updated', { data: { id: 'u3' } });
    await receiver.waitFor(2);
    await eventually(
      async () => ((await service.api.get(`hooks/${hook.id}/recent-logs`)).body as unknown[]).length === 2,
      5000,
      'two logs',
    );
    const bodies = (
      (await service.api.get(`hooks/${hook.id}/recent-logs`)).body as Array<{
        payload: { response: { body: unknown } };
      }>
    ).map((entry) => entry.payload.response.body);
    expect(bodies).to.have.deep.members([{ echoed: { id: 'u2' } }, 'ok']);
  });

  it('logs a network error without a response', async () => {
    const down = await Receiver.down();
    const hook = await createHook(service, down.url, ['OrganizationScope.Created']);
    await service.emit('OrganizationScope.Created', { data: {} });
    const [row] = await deliveryRows(service, hook.id);
    await eventually(async () => (await statusOf(row.id)) === 'failed', 10_000, 'failed');
    const logs = await service.api.get(`hooks/${hook.id}/recent-logs`);
    expect(logs.body).to.have.length(4);
    expect(logs.body[0].payload.result).to.equal('Error');
    expect(logs.body[0].payload.response).to.deep.equal({ statusCode: null, body: null });
    expect(logs.body[0].payload.error).to.match(/ECONNREFUSED/);
  });

  it('prunes attempts and finished deliveries past the retention, never unfinished ones', async () => {
    const hook = await createHook(service, receiver.url, ['User.Created']);
    const old = Date.now() - 15 * 24 * 60 * 60 * 1000;
    const row = (id: string, status: string) => ({
      id,
      hook_id: hook.id,
      event: 'User.Created',
      payload: '{}',
      status,
      attempts: 1,
      next_attempt_at: status === 'pending' ? Date.now() + 3_600_000 : null,
      created_at: old,
      updated_at: old,
    });
    await service
      .db('hook_deliveries')
      .insert([row('oldsucceeded', 'succeeded'), row('oldfailed', 'failed'), row('oldpending', 'pending')]);
    await service.db('hook_attempts').insert(
      ['oldsucceeded', 'oldpending'].map((deliveryId) => ({
        id: `a${deliveryId}`,
        delivery_id: deliveryId,
        hook_id: hook.id,
        event: 'User.Created',
        attempt: 1,
        result: 'Error',
        duration_ms: 1,
        created_at: old,
      })),
    );
    await service.emit('User.Created', { data: {} });
    await receiver.waitFor(1);
    await eventually(
      async () => (await service.db('hook_attempts').where({ hook_id: hook.id })).length === 3,
      5000,
      'the fresh attempt',
    );
    expect(await service.dispatcher.prune()).to.equal(4);
    const left = await deliveryRows(service, hook.id);
    expect(left.map(({ id }) => id).sort())
      .to.include('oldpending')
      .and.have.length(2);
    expect(await service.db('hook_attempts').where({ hook_id: hook.id })).to.have.length(1);
  });

  it('deleting a hook drops its queued deliveries and logs', async () => {
    const down = await Receiver.down();
    const hook = await createHook(service, down.url, ['OrganizationRole.Created']);
    await service.emit('OrganizationRole.Created', { data: {} });
    await eventually(
      async () => (await service.db('hook_attempts').where({ hook_id: hook.id })).length > 0,
      5000,
      'an attempt',
    );
    await service.api.delete(`hooks/${hook.id}`);
    expect(await deliveryRows(service, hook.id)).to.have.length(0);
    expect(await service.db('hook_attempts').where({ hook_id: hook.id })).to.have.length(0);
  });
});

describe('hooks: a receiver that is down for a while', () => {
  let service: HooksService;

  before(async () => {
    service = await startHooksService({ env: { HOOKS_RETRY_SCHEDULE: '0.5,0.5,0.5,0.5,0.5,0.5,0.5,0.5,0.5,0.5' } });
  });
  after(async () => {
    await service.stop();
  });

  it('gets every event once it is back', async () => {
    const receiver = await Receiver.down();
    await createHook(service, receiver.url, ['User.Created', 'User.Deleted']);
    for (let index = 0; index < 10; index++) {
      await service.emit(index % 2 ? 'User.Deleted' : 'User.Created', { data: { index } });
    }
    await sleep(1500);
    await receiver.listen();
    try {
      await receiver.waitFor(10, 10_000);
      const indexes = receiver.requests.map((request) => JSON.parse(request.body).data.index as number);
      expect([...indexes].sort((a, b) => a - b)).to.deep.equal([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
      expect(new Set(receiver.ids).size).to.equal(10);
    } finally {
      await receiver.close();
    }
  });
});

describe('hooks: SSRF guard at send time', () => {
  let service: HooksService;
  let receiver: Receiver;

  before(async () => {
    service = await startHooksService({
      env: { HOOKS_ALLOW_PRIVATE_TARGETS: 'false', HOOKS_RETRY_SCHEDULE: '0.2,0.2,0.2' },
    });
    receiver = await Receiver.start();
  });
  after(async () => {
    await receiver.close();
    await service.stop();
  });

  for (const host of ['127.0.0.1', 'localhost']) {
    it(`refuses a hook saved before the rule (${host}): one Error attempt, not retried, nothing sent`, async () => {
      const id = generateId();
      await service.db.transaction(async (trx) => {
        await insertHook(trx, {
          tenantId: 'default',
          id,
          name: 'legacy',
          event: null,
          events: ['PostRegister'],
          config: { url: `http://${host}:${receiver.port}/hook` },
          signingKey: generateSecret(),
          enabled: true,
          createdAt: Date.now(),
          signatureScheme: 'hmac-sha256',
          payload: 'full',
          excludeApplicationIds: [],
        });
        await bumpCacheVersion(trx, hooksCache);
      });
      await service.emit('PostRegister', { userId: 'u1' });
      const [row] = await deliveryRows(service, id);
      await eventually(
        async () => (await service.db('hook_deliveries').where({ id: row.id }).first()).status === 'failed',
        5000,
        'failed',
      );
      await sleep(500);
      const attempts = await service.db('hook_attempts').where({ hook_id: id });
      expect(attempts).to.have.length(1);
      expect(attempts[0].result).to.equal('Error');
      expect(attempts[0].error).to.match(
        /^(ERR_HOOK_TARGET_REFUSED: )?The hook target (127\.0\.0\.1 is|localhost resolves to \S+,) a private or reserved address \(HOOKS_ALLOW_PRIVATE_TARGETS is off\)$/,
      );
      expect(receiver.requests).to.have.length(0);
    });
  }
});
