import { createHmac } from 'node:crypto';
import { expect } from 'chai';
import { Webhook } from 'standardwebhooks';

import { Receiver } from './receiver.ts';
import { createHook, type HooksService, startHooksService } from './support.ts';

describe('hooks: POST /hooks/:id/test', () => {
  let service: HooksService;
  let strict: HooksService;
  let receiver: Receiver;

  before(async () => {
    service = await startHooksService();
    strict = await startHooksService({ env: { HOOKS_ALLOW_PRIVATE_TARGETS: 'false' } });
    receiver = await Receiver.start();
  });
  after(async () => {
    await receiver.close();
    await service.stop();
    await strict.stop();
  });

  it('sends one signed sample payload per event to the given URL: 204', async () => {
    const hook = await createHook(service, 'http://127.0.0.1:9/unused', ['User.Created']);
    const before = receiver.requests.length;
    const response = await service.api.post(`hooks/${hook.id}/test`, {
      json: {
        events: ['PostSignIn', 'Organization.Membership.Updated', 'Message.RateLimited'],
        config: { url: receiver.url, headers: { 'x-test': '1' } },
      },
    });
    expect(response.statusCode).to.equal(204);
    const requests = receiver.requests.slice(before);
    expect(requests).to.have.length(3);
    const payloads = requests.map((request) => JSON.parse(request.body));
    expect(payloads.map(({ event }) => event)).to.deep.equal([
      'PostSignIn',
      'Organization.Membership.Updated',
      'Message.RateLimited',
    ]);
    for (const [index, request] of requests.entries()) {
      expect(payloads[index].hookId).to.equal(hook.id);
      expect(request.headers['x-test']).to.equal('1');
      expect(request.headers['logto-signature-sha-256']).to.equal(
        createHmac('sha256', hook.signingKey).update(request.body).digest('hex'),
      );
      new Webhook(`whsec_${Buffer.from(hook.signingKey).toString('base64')}`).verify(
        request.body,
        request.headers as Record<string, string>,
      );
    }
    expect(payloads[0]).to.include.keys(
      'interactionEvent',
      'sessionId',
      'userId',
      'user',
      'application',
      'userIp',
      'userAgent',
    );
    expect(payloads[1]).to.include.keys('data', 'organizationId', 'addedUserIds', 'path', 'matchedRoute');
    expect(payloads[2]).to.include.keys('action', 'recipient');
    // The hook itself is unchanged and nothing was queued.
    expect((await service.api.get(`hooks/${hook.id}`)).body.config.url).to.equal('http://127.0.0.1:9/unused');
    expect(await service.db('hook_deliveries').where({ hook_id: hook.id })).to.have.length(0);
  });

  it('answers 422 hook.endpoint_responded_with_error when the endpoint answers non-2xx', async () => {
    const hook = await createHook(service, receiver.url);
    receiver.answers.push({ status: 418, body: 'teapot' });
    const response = await service.api.post(`hooks/${hook.id}/test`, {
      json: { events: ['User.Created'], config: { url: receiver.url } },
    });
    expect(response.statusCode).to.equal(422);
    expect(response.body.code).to.equal('hook.endpoint_responded_with_error');
    expect(response.body.data).to.deep.equal({ responseStatus: 418, responseBody: 'teapot' });
  });

  it('answers 422 hook.send_test_payload_failed when the endpoint cannot be reached', async () => {
    const hook = await createHook(service, receiver.url);
    const down = await Receiver.down();
    const response = await service.api.post(`hooks/${hook.id}/test`, {
      json: { events: ['User.Created'], config: { url: down.url } },
    });
    expect(response.statusCode).to.equal(422);
    expect(response.body.code).to.equal('hook.send_test_payload_failed');
    expect(response.body.message).to.match(/^Failed to send test payload: .*ECONNREFUSED/);
  });

  it('validates: 404 unknown hook, 400 missing events, 400 bad URL', async () => {
    const hook = await createHook(service, receiver.url);
    const unknown = await service.api.post('hooks/nope/test', {
      json: { events: ['User.Created'], config: { url: receiver.url } },
    });
    expect(unknown.statusCode).to.equal(404);
    const missing = await service.api.post(`hooks/${hook.id}/test`, { json: { config: { url: receiver.url } } });
    expect(missing.statusCode).to.equal(400);
    expect(missing.body.code).to.equal('hook.missing_events');
    const scheme = await service.api.post(`hooks/${hook.id}/test`, {
      json: { events: ['User.Created'], config: { url: 'ftp://x/' } },
    });
    expect(scheme.statusCode).to.equal(400);
    expect(scheme.body.code).to.equal('hook.invalid_url');
  });

  it('applies the SSRF guard', async () => {
    const hook = await createHook(strict, 'https://93.184.215.14/hook');
    const before = receiver.requests.length;
    for (const url of [receiver.url, `http://localhost:${receiver.port}/hook`]) {
      const response = await strict.api.post(`hooks/${hook.id}/test`, {
        json: { events: ['User.Created'], config: { url } },
      });
      expect(response.statusCode, url).to.equal(400);
      expect(response.body.code).to.equal('hook.invalid_url');
    }
    expect(receiver.requests.length).to.equal(before);
  });
});
