import { expect } from 'chai';

import { expectStatus } from '../support/expect.ts';
import { type HttpResponse, startService, type TestService } from '../support/service.ts';

/**
 * Whatever the API accepts, the database stores: values at the limits, in characters that take the
 * most bytes, are kept whole on MySQL as on SQLite; one step further is 400 naming the field.
 */

const emoji = '\u{1F600}'; // one character, four bytes in UTF-8
const kib = 1024;

function expectInvalid(response: HttpResponse, path: string): void {
  expect(response.statusCode, JSON.stringify(response.body).slice(0, 300)).to.equal(400);
  expect(response.body.code).to.equal('guard.invalid_input');
  expect(response.body.details.map((detail: { path: string }) => detail.path)).to.include(path);
}

/** `{"a":"ééé…"}` of exactly `bytes` bytes as JSON (é is two bytes). */
const jsonOfBytes = (bytes: number) => ({ a: '\u00e9'.repeat((bytes - '{"a":""}'.length) / 2) });

describe('input limits: what the API accepts at its limits, the database stores whole', () => {
  let service: TestService;
  let userId: string;
  before(async () => {
    service = await startService();
    userId = (await service.api.post('users', { json: { username: 'limits' } })).body.id;
  });
  after(() => service.stop());

  it('an application with 100 redirect URIs of 2,048 four-byte characters', async () => {
    const uri = (index: number) => `https://app.example.com/${index}/`.padEnd(2048 - 1000, 'p') + emoji.repeat(1000);
    const redirectUris = Array.from({ length: 100 }, (_, index) => uri(index));
    // eslint-disable-next-line @typescript-eslint/no-misused-spread -- counts code points on purpose: the limit is 2,048 characters
    expect([...redirectUris[0]]).to.have.length(2048);
    const created = await service.api.post('applications', {
      json: { name: 'Wide', type: 'Traditional', oidcClientMetadata: { redirectUris, postLogoutRedirectUris: [] } },
    });
    expectStatus(created, 200);
    const read = await service.api.get(`applications/${created.body.id}`);
    expect(read.body.oidcClientMetadata.redirectUris).to.deep.equal(redirectUris);
  });

  it('a hook with 50 headers of 8,192 two-byte characters', async () => {
    const headers = Object.fromEntries(
      Array.from({ length: 50 }, (_, index) => [`x-header-${index}`, '\u00e9'.repeat(8192)]),
    );
    const created = await service.api.post('hooks', {
      json: { name: 'Wide', events: ['User.Created'], config: { url: 'https://hooks.example.com/in', headers } },
    });
    expectStatus(created, 201);
    const read = await service.api.get(`hooks/${created.body.id}`);
    expect(read.body.config.headers).to.deep.equal(headers);
    const tooMany = { ...headers, 'x-one-more': 'x' };
    expectInvalid(
      await service.api.patch(`hooks/${created.body.id}`, {
        json: { config: { url: 'https://hooks.example.com/in', headers: tooMany } },
      }),
      'config.headers',
    );
  });

  it('1,000 rejected password words of 128 four-byte characters in the sign-in experience', async () => {
    const current = (await service.api.get('sign-in-exp')).body;
    const words = Array.from({ length: 1000 }, (_, index) => `${index}`.padEnd(128 - 100, 'w') + emoji.repeat(100));
    const passwordPolicy = { ...current.passwordPolicy, rejects: { ...current.passwordPolicy.rejects, words } };
    expectStatus(await service.api.patch('sign-in-exp', { json: { passwordPolicy } }), 200);
    expect((await service.api.get('sign-in-exp')).body.passwordPolicy.rejects.words).to.deep.equal(words);
  });

  it('identity details and subject-token context of 64 KiB as JSON; a byte more is 400', async () => {
    const details = jsonOfBytes(64 * kib);
    expect(Buffer.byteLength(JSON.stringify(details))).to.equal(64 * kib);
    expectStatus(
      await service.api.put(`users/${userId}/identities/wide`, { json: { userId: 'wide-1', details } }),
      201,
    );
    expect((await service.api.get(`users/${userId}/identities`)).body.wide.details).to.deep.equal(details);
    const over = { ...details, b: '' };
    expectInvalid(
      await service.api.put(`users/${userId}/identities/wider`, { json: { userId: 'wider-1', details: over } }),
      'details',
    );

    expectStatus(await service.api.post('subject-tokens', { json: { userId, context: details } }), 201);
    expectInvalid(await service.api.post('subject-tokens', { json: { userId, context: over } }), 'context');
  });

  it("a user's identities stop at 1 MiB together, with a 400 rather than a database error", async () => {
    const details = jsonOfBytes(64 * kib);
    const answers: number[] = [];
    for (let index = 0; index < 17; index++) {
      answers.push(
        (
          await service.api.put(`users/${userId}/identities/many-${index}`, {
            json: { userId: `many-${index}`, details },
          })
        ).statusCode,
      );
    }
    expect(answers.slice(0, 14)).to.deep.equal(Array(14).fill(201));
    expect(answers.at(-1)).to.equal(400);
    const last = await service.api.put(`users/${userId}/identities/many-last`, {
      json: { userId: 'many-last', details },
    });
    expectInvalid(last, 'identities');
    expect(Object.keys((await service.api.get(`users/${userId}/identities`)).body)).to.not.include('many-last');
  });

  it('custom data merged over 256 KiB is 400, and what was stored stays', async () => {
    const first = { first: 'x'.repeat(200 * kib) };
    expectStatus(await service.api.patch(`users/${userId}/custom-data`, { json: { customData: first } }), 200);
    const grown = await service.api.patch(`users/${userId}/custom-data`, {
      json: { customData: { second: 'x'.repeat(100 * kib) } },
    });
    expectInvalid(grown, 'customData');
    expect((await service.api.get(`users/${userId}/custom-data`)).body).to.deep.equal(first);
    // Each alone fits: the limit is on what is kept.
    expectInvalid(
      await service.api.patch(`users/${userId}`, { json: { customData: { big: 'x'.repeat(257 * kib) } } }),
      'customData',
    );
    expectStatus(
      await service.api.patch(`users/${userId}`, { json: { customData: { second: 'x'.repeat(100 * kib) } } }),
      200,
    );
  });

  it('a social connector named in 100 locales of 128 four-byte characters', async () => {
    const name = Object.fromEntries(
      Array.from({ length: 100 }, (_, index) => [`l${index}`.padEnd(64, 'x'), emoji.repeat(128)]),
    );
    const config = {
      // Saved only if its IdP answers: the service itself.
      authorizationEndpoint: `${service.config.issuer}/auth`,
      tokenEndpoint: `${service.config.issuer}/token`,
      userInfoEndpoint: `${service.config.issuer}/me`,
      clientId: 'client',
      clientSecret: 'secret',
    };
    const created = await service.api.post('connectors', {
      json: { connectorId: 'oauth2', config, metadata: { target: 'wide', name } },
    });
    expectStatus(created, 200);
    expect((await service.api.get(`connectors/${created.body.id}`)).body.name).to.deep.equal(name);
  });
});
