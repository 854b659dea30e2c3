import { expect } from 'chai';

import { hookEvents } from '../../lib/hooks/events.ts';
import { eventually } from '../support/eventually.ts';
import { Receiver } from './receiver.ts';
import { createHook, type HooksService, startHooksService } from './support.ts';

describe('hooks: management', () => {
  let service: HooksService;
  let receiver: Receiver;

  before(async () => {
    service = await startHooksService();
    receiver = await Receiver.start();
  });
  after(async () => {
    await receiver.close();
    await service.stop();
  });

  it("takes Logto's whole event list, also the events of features this service does not have", async () => {
    const logtoOnly = [
      'PostSignInAdaptiveMfaTriggered',
      'TrustedDevice.Created',
      'TrustedDevice.Deleted',
      'Grant.LimitExceeded',
    ];
    const created = await service.api.post('hooks', {
      json: { name: 'logto', events: [...hookEvents, ...logtoOnly], config: { url: receiver.url } },
    });
    expect(created.statusCode, JSON.stringify(created.body)).to.equal(201);
    expect(created.body.events).to.deep.equal([...hookEvents, ...logtoOnly]);
    const updated = await service.api.patch(`hooks/${created.body.id}`, { json: { events: ['Grant.LimitExceeded'] } });
    expect(updated.statusCode).to.equal(200);
    expect(updated.body.events).to.deep.equal(['Grant.LimitExceeded']);
    // A test request sends sample payloads, which exist for the events that occur here.
    const test = await service.api.post(`hooks/${created.body.id}/test`, {
      json: { events: ['Grant.LimitExceeded'], config: { url: receiver.url } },
    });
    expect(test.statusCode).to.equal(400);
    expect(test.body.code).to.equal('guard.invalid_input');
    expect((await service.api.delete(`hooks/${created.body.id}`)).statusCode).to.equal(204);
  });

  it('creates a hook with a generated signing key (201, Logto shape)', async () => {
    const response = await service.api.post('hooks', {
      json: {
        name: 'users',
        events: ['User.Created', 'User.Deleted', 'User.Created'],
        config: { url: receiver.url, headers: { 'x-team': 'a' } },
      },
    });
    expect(response.statusCode).to.equal(201);
    const hook = response.body;
    expect(hook).to.include({ tenantId: 'default', name: 'users', event: null, enabled: true });
    expect(hook.id).to.match(/^[0-9a-z]{21}$/);
    expect(hook.signingKey).to.match(/^[0-9A-Za-z]{32}$/);
    expect(hook.events).to.deep.equal(['User.Created', 'User.Deleted']);
    expect(hook.config).to.deep.equal({ url: receiver.url, headers: { 'x-team': 'a' } });
    expect(hook.createdAt).to.be.a('number');
    expect(Object.keys(hook).sort()).to.deep.equal([
      'config',
      'createdAt',
      'disabledReason',
      'enabled',
      'event',
      'events',
      'excludeApplicationIds',
      'id',
      'name',
      'notifyEmail',
      'ordering',
      'payload',
      'rateLimitPerSecond',
      'signatureScheme',
      'signingKey',
      'tenantId',
    ]);
    // CONTRACT.md §9's delivery settings, at their defaults.
    expect(hook).to.include({ disabledReason: null, ordering: 'none', rateLimitPerSecond: null, notifyEmail: null });

    const fetched = await service.api.get(`hooks/${hook.id}`);
    expect(fetched.statusCode).to.equal(200);
    expect(fetched.body).to.deep.equal(hook);
  });

  it('accepts the deprecated single `event`', async () => {
    const response = await service.api.post('hooks', { json: { event: 'PostSignIn', config: { url: receiver.url } } });
    expect(response.statusCode).to.equal(201);
    expect(response.body.events).to.deep.equal(['PostSignIn']);
    expect(response.body.name).to.equal('');
  });

  it('validates: no events (hook.missing_events), unknown events, bad config, bad URL scheme', async () => {
    const missing = await service.api.post('hooks', { json: { name: 'x', config: { url: receiver.url } } });
    expect(missing.statusCode).to.equal(400);
    expect(missing.body.code).to.equal('hook.missing_events');

    for (const body of [
      { events: [], config: { url: receiver.url } },
      { events: ['User.Exploded'], config: { url: receiver.url } },
      { events: ['PostSignIn'] },
      { events: ['PostSignIn'], config: { url: receiver.url, headers: { 'bad header': 'x' } } },
      { events: ['PostSignIn'], config: { url: receiver.url, headers: { 'x-a': 'line\r\nbreak' } } },
      { events: ['PostSignIn'], config: { url: receiver.url, headers: { 'x-a': 'emoji 😀' } } },
      { events: ['PostSignIn'], config: { url: receiver.url }, unknownField: true },
    ]) {
      const response = await service.api.post('hooks', { json: body });
      expect(response.statusCode, JSON.stringify(body)).to.equal(400);
      expect(response.body.code).to.equal('guard.invalid_input');
    }

    for (const url of ['ftp://example.com/hook', 'not a url', 'javascript:alert(1)', 'file:///etc/passwd']) {
      const response = await service.api.post('hooks', { json: { events: ['PostSignIn'], config: { url } } });
      expect(response.statusCode, url).to.equal(400);
      expect(response.body.code).to.equal('hook.invalid_url');
    }
  });

  it('accepts every one of the 27 events', async () => {
    expect(hookEvents).to.have.length(27);
    const response = await service.api.post('hooks', { json: { events: hookEvents, config: { url: receiver.url } } });
    expect(response.statusCode).to.equal(201);
    expect(response.body.events).to.deep.equal([...hookEvents]);
    await service.api.delete(`hooks/${response.body.id}`);
  });

  it('updates, lists with Total-Number, replaces the signing key, deletes', async () => {
    const hook = await createHook(service, receiver.url, ['Role.Created']);
    const patched = await service.api.patch(`hooks/${hook.id}`, {
      json: { name: 'renamed', events: ['Role.Deleted'], enabled: false, config: { url: `${receiver.url}?v=2` } },
    });
    expect(patched.statusCode).to.equal(200);
    expect(patched.body).to.include({ name: 'renamed', enabled: false, signingKey: hook.signingKey });
    expect(patched.body.events).to.deep.equal(['Role.Deleted']);
    expect(patched.body.config).to.deep.equal({ url: `${receiver.url}?v=2` });

    const badUrl = await service.api.patch(`hooks/${hook.id}`, { json: { config: { url: 'gopher://x' } } });
    expect(badUrl.statusCode).to.equal(400);
    expect(badUrl.body.code).to.equal('hook.invalid_url');

    const list = await service.api.get('hooks');
    expect(list.statusCode).to.equal(200);
    expect(Number(list.headers['total-number'])).to.equal(list.body.length);
    expect(list.body.map(({ id }: { id: string }) => id)).to.include(hook.id);
    expect(list.body[0]).not.to.have.property('executionStats');

    const page = await service.api.get('hooks', { searchParams: { page: 1, page_size: 1 } });
    expect(page.body).to.have.length(1);

    const rekeyed = await service.api.patch(`hooks/${hook.id}/signing-key`);
    expect(rekeyed.statusCode).to.equal(200);
    expect(rekeyed.body.signingKey)
      .to.match(/^[0-9A-Za-z]{32}$/)
      .and.not.equal(hook.signingKey);

    expect((await service.api.delete(`hooks/${hook.id}`)).statusCode).to.equal(204);
    for (const response of [
      await service.api.get(`hooks/${hook.id}`),
      await service.api.patch(`hooks/${hook.id}`, { json: { name: 'x' } }),
      await service.api.delete(`hooks/${hook.id}`),
      await service.api.patch(`hooks/${hook.id}/signing-key`),
    ]) {
      expect(response.statusCode).to.equal(404);
      expect(response.body.code).to.equal('entity.not_exists_with_id');
    }
  });

  it('includes execution stats of the last 24 hours on request', async () => {
    const hook = await createHook(service, receiver.url, ['Scope.Created']);
    receiver.answers.push({ status: 500 }, { status: 200 });
    const before = receiver.requests.length;
    await service.emit('Scope.Created', { data: { id: 's1' } });
    // The first try fails (500) and the retry (5 s by default) is not awaited here: one request, no success.
    await receiver.waitFor(before + 1);
    const one = await eventually(
      async () => {
        const response = await service.api.get(`hooks/${hook.id}`, { searchParams: { includeExecutionStats: 'true' } });
        return response.body.executionStats.requestCount > 0 && response;
      },
      15_000,
      'a request counted',
    );
    expect(one.body.executionStats).to.deep.equal({ requestCount: 1, successCount: 0 });
    const list = await service.api.get('hooks', { searchParams: { includeExecutionStats: '1' } });
    const listed = list.body.find(({ id }: { id: string }) => id === hook.id);
    expect(listed.executionStats).to.deep.equal({ requestCount: 1, successCount: 0 });
    await service.api.delete(`hooks/${hook.id}`);
  });
});

describe('hooks: SSRF guard at save time', () => {
  let strict: HooksService;
  let lenient: HooksService;

  before(async () => {
    strict = await startHooksService({ env: { HOOKS_ALLOW_PRIVATE_TARGETS: 'false' } });
    lenient = await startHooksService({ env: { HOOKS_ALLOW_PRIVATE_TARGETS: 'true' } });
  });
  after(async () => {
    await strict.stop();
    await lenient.stop();
  });

  const privateTargets = [
    'http://127.0.0.1:8080/hook',
    'http://localhost/hook',
    'http://[::1]/hook',
    'http://[::ffff:127.0.0.1]/hook',
    'http://[::ffff:a9fe:a9fe]/latest/meta-data',
    'http://0.0.0.0/',
    'http://10.1.2.3/',
    'http://172.16.0.1/',
    'http://192.168.1.1/',
    'http://169.254.169.254/latest/meta-data',
    'http://100.64.0.1/',
    'http://224.0.0.1/',
    'http://[fe80::1]/',
    'http://[fc00::1]/',
    'http://[fd12:3456::1]/',
    'http://[64:ff9b::7f00:1]/',
    'http://2130706433/',
    'http://0x7f.1/',
    'https://127.1/',
  ];

  it('refuses private, loopback, link-local and similar targets with 400 hook.invalid_url', async () => {
    for (const url of privateTargets) {
      const response = await strict.api.post('hooks', { json: { events: ['PostSignIn'], config: { url } } });
      expect(response.statusCode, url).to.equal(400);
      expect(response.body.code, url).to.equal('hook.invalid_url');
    }
  });

  it('refuses them on update too', async () => {
    const hook = await createHook(strict, 'https://93.184.215.14/hook');
    const response = await strict.api.patch(`hooks/${hook.id}`, { json: { config: { url: 'http://127.0.0.1/' } } });
    expect(response.statusCode).to.equal(400);
    expect(response.body.code).to.equal('hook.invalid_url');
    expect(response.body.message).to.equal(
      'The hook target 127.0.0.1 is a private or reserved address (HOOKS_ALLOW_PRIVATE_TARGETS is off).',
    );
  });

  it('accepts public addresses', async () => {
    for (const url of ['https://93.184.215.14/hook', 'http://[2606:4700::1111]/hook', 'https://8.8.8.8:8443/x']) {
      const response = await strict.api.post('hooks', { json: { events: ['PostSignIn'], config: { url } } });
      expect(response.statusCode, url).to.equal(201);
    }
  });

  it('allows private targets when HOOKS_ALLOW_PRIVATE_TARGETS=true', async () => {
    for (const url of privateTargets.slice(0, 4)) {
      const response = await lenient.api.post('hooks', { json: { events: ['PostSignIn'], config: { url } } });
      expect(response.statusCode, url).to.equal(201);
    }
    const scheme = await lenient.api.post('hooks', {
      json: { events: ['PostSignIn'], config: { url: 'ftp://127.0.0.1/' } },
    });
    expect(scheme.statusCode).to.equal(400);
    expect(scheme.body.code).to.equal('hook.invalid_url');
  });
});
