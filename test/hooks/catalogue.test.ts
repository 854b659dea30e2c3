import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { expect } from 'chai';

import { hookEvents } from '../../lib/hooks/events.ts';
import { identify, openExperience, type SignInSetting, startSignInSetting } from '../experience/experience-helpers.ts';
import { expectStatus } from '../support/expect.ts';
import type { HttpResponse } from '../support/service.ts';
import { unique } from '../support/values.ts';
import { Receiver } from './receiver.ts';
import { createHook, deliveryRows, type HooksService, startHooksService } from './support.ts';

type WebhookEntry = {
  post: {
    requestBody: {
      content: { 'application/json': { schema: object; examples: { sample: { value: Record<string, unknown> } } } };
    };
  };
};

/** Checks payloads against the `webhooks` of the service's document; `disagreement` says what is wrong, if anything. */
async function publishedSchemas(serviceUrl: string) {
  const document = (await (await fetch(`${serviceUrl}/api/swagger.json`)).json()) as {
    openapi: string;
    webhooks: Record<string, WebhookEntry>;
  };
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  const validators = new Map<string, ValidateFunction>(
    Object.entries(document.webhooks).map(([event, entry]) => [
      event,
      ajv.compile(entry.post.requestBody.content['application/json'].schema),
    ]),
  );
  const disagreement = (body: Record<string, unknown>): string | undefined => {
    const event = String(body.event);
    const validate = validators.get(event);
    if (!validate) {
      return `${event}: no schema`;
    }
    return validate(body) ? undefined : `${event}: ${ajv.errorsText(validate.errors)} in ${JSON.stringify(body)}`;
  };
  return { document, disagreement };
}

const ok = (response: HttpResponse) => {
  expect(response.statusCode, JSON.stringify(response.body)).to.be.within(200, 299);
  return response.body as { id: string };
};

/** The payload without its envelope's per-delivery fields. */
const withoutEnvelope = (payload: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(payload).filter(([key]) => key !== 'hookId' && key !== 'createdAt'));

describe('hooks: the typed catalogue (OpenAPI 3.1 webhooks)', () => {
  let service: HooksService;
  let receiver: Receiver;
  let webhooks: Record<string, WebhookEntry>;
  let disagreement: (body: Record<string, unknown>) => string | undefined;

  before(async () => {
    service = await startHooksService();
    receiver = await Receiver.start();
    const published = await publishedSchemas(service.url);
    expect(published.document.openapi).to.match(/^3\.1\.\d+$/);
    webhooks = published.document.webhooks;
    disagreement = published.disagreement;
  });
  after(async () => {
    await receiver.close();
    await service.stop();
  });

  it('has one entry per event, each with an example that its schema accepts', () => {
    expect(Object.keys(webhooks).sort()).to.deep.equal([...hookEvents].sort());
    for (const [event, entry] of Object.entries(webhooks)) {
      const example = entry.post.requestBody.content['application/json'].examples.sample.value;
      expect(example.event).to.equal(event);
      expect(disagreement(example)).to.equal(undefined);
    }
    // Not a schema that accepts anything: a wrong field is refused.
    const example = webhooks['User.Created'].post.requestBody.content['application/json'].examples.sample.value;
    expect(disagreement({ ...example, data: { id: 1 } })).to.be.a('string');
    expect(disagreement({ ...example, actor: { type: 'robot', id: 'x' } })).to.be.a('string');
  });

  it('the test request sends exactly the published examples', async () => {
    const hook = await createHook(service, receiver.url, ['PostSignIn'], { enabled: false });
    const before = receiver.requests.length;
    ok(
      await service.api.post(`hooks/${hook.id}/test`, {
        json: { events: [...hookEvents], config: { url: receiver.url } },
      }),
    );
    const sent = receiver.requests.slice(before).map((request) => JSON.parse(request.body) as Record<string, unknown>);
    expect(sent.map((body) => body.event)).to.deep.equal([...hookEvents]);
    for (const body of sent) {
      const example = webhooks[String(body.event)].post.requestBody.content['application/json'].examples.sample.value;
      expect(withoutEnvelope(body)).to.deep.equal(withoutEnvelope(example));
      expect(body.hookId).to.equal(hook.id);
      expect(disagreement(body)).to.equal(undefined);
    }
  });

  it('every delivery of a representative run of management changes validates against its schema, full and thin', async () => {
    const full = await createHook(service, receiver.url, [...hookEvents]);
    const thin = await createHook(service, receiver.url, [...hookEvents], { payload: 'thin' });
    const { api } = service;

    const user = ok(await api.post('users', { json: { username: unique('cat').replace(/\W/g, '_') } }));
    ok(await api.patch(`users/${user.id}`, { json: { name: 'Cat Alogue' } }));
    ok(await api.patch(`users/${user.id}/custom-data`, { json: { customData: { plan: 'pro' } } }));
    ok(await api.patch(`users/${user.id}/profile`, { json: { profile: { nickname: 'cat' } } }));
    ok(await api.patch(`users/${user.id}/password`, { json: { password: 'Quiet-Harbor-Lantern-82' } }));
    ok(await api.patch(`users/${user.id}/is-suspended`, { json: { isSuspended: true } }));

    const indicator = `https://${unique('api')}.example.com`;
    const resource = ok(await api.post('resources', { json: { name: indicator, indicator } }));
    const scope = ok(await api.post(`resources/${resource.id}/scopes`, { json: { name: 'read:cats' } }));
    ok(await api.patch(`resources/${resource.id}/scopes/${scope.id}`, { json: { description: 'Read cats' } }));
    const role = ok(
      await api.post('roles', { json: { name: unique('role'), description: 'Cats', scopeIds: [scope.id] } }),
    );
    ok(await api.patch(`roles/${role.id}`, { json: { description: 'All cats' } }));
    ok(await api.delete(`roles/${role.id}/scopes/${scope.id}`));
    ok(await api.post(`roles/${role.id}/scopes`, { json: { scopeIds: [scope.id] } }));
    ok(await api.delete(`roles/${role.id}`));
    ok(await api.delete(`resources/${resource.id}/scopes/${scope.id}`));

    const organizationScope = ok(await api.post('organization-scopes', { json: { name: unique('read') } }));
    ok(await api.patch(`organization-scopes/${organizationScope.id}`, { json: { description: 'Read' } }));
    const organizationRole = ok(
      await api.post('organization-roles', {
        json: { name: unique('member'), organizationScopeIds: [organizationScope.id] },
      }),
    );
    ok(await api.patch(`organization-roles/${organizationRole.id}`, { json: { description: 'Member' } }));
    ok(await api.put(`organization-roles/${organizationRole.id}/scopes`, { json: { organizationScopeIds: [] } }));
    const organization = ok(await api.post('organizations', { json: { name: unique('org') } }));
    ok(await api.patch(`organizations/${organization.id}`, { json: { description: 'Cats, Inc.' } }));
    ok(await api.post(`organizations/${organization.id}/users`, { json: { userIds: [user.id] } }));
    ok(await api.delete(`organizations/${organization.id}/users/${user.id}`));
    ok(await api.delete(`organizations/${organization.id}`));
    ok(await api.delete(`organization-roles/${organizationRole.id}`));
    ok(await api.delete(`organization-scopes/${organizationScope.id}`));
    ok(await api.delete(`users/${user.id}`));

    // Every event written for the two hooks, delivered (the outbox rows exist once the changes commit).
    const expected = (await deliveryRows(service, full.id)).length + (await deliveryRows(service, thin.id)).length;
    const bodies = () =>
      receiver.requests
        .map((request) => JSON.parse(request.body) as Record<string, unknown>)
        .filter((body) => body.hookId === full.id || body.hookId === thin.id);
    await receiver.waitFor(receiver.requests.length - bodies().length + expected);
    const delivered = bodies();
    expect(delivered).to.have.length(expected);
    const events = new Set(delivered.map((body) => String(body.event)));
    expect(events.size, [...events].join(', ')).to.be.at.least(20);
    expect(delivered.map(disagreement).filter(Boolean)).to.deep.equal([]);
    expect(delivered.filter((body) => body.hookId === thin.id).every((body) => !('data' in body))).to.equal(true);
  });
});

describe('hooks: the typed catalogue, for the end user’s events', () => {
  let setting: SignInSetting;
  let disagreement: (body: Record<string, unknown>) => string | undefined;

  before(async () => {
    setting = await startSignInSetting();
    ({ disagreement } = await publishedSchemas(setting.service.url));
  });
  after(() => setting.stop());

  it('a registration’s User.Created and PostRegister validate against their schemas', async () => {
    const browser = await openExperience(setting.service, setting.spa.id, 'Register');
    const identity = await browser.call('post', 'api/experience/verification/new-password-identity', {
      identifier: { type: 'username', value: unique('registered') },
      password: 'Quiet-Harbor-Lantern-82',
    });
    expectStatus(identity, 200);
    const identified = await setting.events.expect(['User.Created'], () =>
      identify(browser, { verificationId: identity.body.verificationId }),
    );
    const submitted = await setting.events.expect(['PostRegister'], () =>
      browser.call('post', 'api/experience/submit'),
    );
    const payloads = [...identified.payloads['User.Created'], ...submitted.payloads.PostRegister];
    expect(payloads.map(disagreement).filter(Boolean)).to.deep.equal([]);
  });
});
