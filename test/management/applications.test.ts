import { expect } from 'chai';
import { got } from 'got';

import { adminClient, startService, type TestService } from '../support/service.ts';
import { unique } from '../support/values.ts';

type ApplicationType = 'MachineToMachine' | 'Traditional' | 'SPA' | 'Native';

type Application = {
  tenantId: string;
  id: string;
  name: string;
  secret?: string;
  description: string | null;
  type: ApplicationType;
  oidcClientMetadata: { redirectUris: string[]; postLogoutRedirectUris: string[] } & Record<string, unknown>;
  customClientMetadata: Record<string, unknown>;
  protectedAppMetadata: unknown;
  customData: Record<string, unknown>;
  isThirdParty: boolean;
  appLevelAccessControlEnabled: boolean;
  createdAt: number;
};

type ErrorBody = { code: string; message: string; details?: Array<{ in: string; path: string; message: string }> };

type Reply<T> = { statusCode: number; headers: Record<string, string | string[] | undefined>; body: T };

const applicationKeys = [
  'tenantId',
  'id',
  'name',
  'description',
  'type',
  'oidcClientMetadata',
  'customClientMetadata',
  'protectedAppMetadata',
  'customData',
  'isThirdParty',
  'appLevelAccessControlEnabled',
  'createdAt',
];

const types: ApplicationType[] = ['MachineToMachine', 'Traditional', 'SPA', 'Native'];

describe('management API: applications', () => {
  let service: TestService;

  before(async () => {
    service = await startService();
  });
  after(() => service.stop());

  /** One management API call; the body is typed as the caller expects it (an error body by default). */
  async function call<T = ErrorBody>(
    method: 'get' | 'post' | 'patch' | 'delete',
    path: string,
    json?: unknown,
  ): Promise<Reply<T>> {
    const { statusCode, headers, body } = await service.api[method](path, json === undefined ? {} : { json });
    return { statusCode, headers, body: body as T };
  }

  async function create(body: Record<string, unknown>): Promise<Application> {
    const response = await call<Application>('post', 'applications', body);
    expect(response.statusCode, JSON.stringify(response.body)).to.equal(200);
    return response.body;
  }

  /** A name no other test uses, so searches find exactly the applications of one test. */

  function expectInvalidInput(response: Reply<ErrorBody>) {
    expect(response.statusCode).to.equal(400);
    expect(response.body.code).to.equal('guard.invalid_input');
  }

  describe('POST /api/applications', () => {
    for (const type of types) {
      it(`creates a ${type} application in Logto's shape`, async () => {
        const before = Date.now();
        const response = await call<Application>('post', 'applications', { name: `My ${type} app`, type });

        expect(response.statusCode).to.equal(200);
        const application = response.body;
        expect(application).to.have.all.keys(applicationKeys);
        expect(application).to.include({
          tenantId: 'default',
          name: `My ${type} app`,
          description: null,
          type,
          protectedAppMetadata: null,
          isThirdParty: false,
          appLevelAccessControlEnabled: false,
        });
        expect(application.id).to.be.a('string').and.not.equal('');
        // Logto's: no legacy secret is shown; a confidential application has its "Default secret".
        expect(application).to.not.have.property('secret');
        const secrets = await call<Array<{ name: string; value: string; expiresAt: number | null }>>(
          'get',
          `applications/${application.id}/secrets`,
        );
        if (type === 'MachineToMachine' || type === 'Traditional') {
          expect(secrets.body).to.have.length(1);
          expect(secrets.body[0]).to.include({ name: 'Default secret', expiresAt: null });
          expect(secrets.body[0].value).to.match(/^[0-9a-zA-Z]{32}$/);
        } else {
          expect(secrets.body).to.deep.equal([]);
        }
        expect(application.oidcClientMetadata).to.deep.equal({ redirectUris: [], postLogoutRedirectUris: [] });
        expect(application.customClientMetadata).to.deep.equal({});
        expect(application.customData).to.deep.equal({});
        expect(application.createdAt)
          .to.be.a('number')
          .within(before - 1000, Date.now() + 1000);
      });
    }

    it('keeps the optional fields it is given', async () => {
      const application = await create({
        name: 'Full app',
        type: 'Traditional',
        description: 'Has everything',
        oidcClientMetadata: {
          redirectUris: ['https://app.example.com/callback'],
          postLogoutRedirectUris: ['https://app.example.com'],
        },
        customClientMetadata: { idTokenTtl: 600, corsAllowedOrigins: ['https://app.example.com'] },
        customData: { team: 'billing', level: 3 },
        isThirdParty: true,
      });

      expect(application).to.deep.include({
        description: 'Has everything',
        oidcClientMetadata: {
          redirectUris: ['https://app.example.com/callback'],
          postLogoutRedirectUris: ['https://app.example.com'],
        },
        customClientMetadata: { idTokenTtl: 600, corsAllowedOrigins: ['https://app.example.com'] },
        customData: { team: 'billing', level: 3 },
        isThirdParty: true,
      });
    });

    it('gives every application its own id and Default secret', async () => {
      const first = await create({ name: 'Twin', type: 'Traditional' });
      const second = await create({ name: 'Twin', type: 'Traditional' });
      const secretOf = async (id: string) =>
        (await call<Array<{ value: string }>>('get', `applications/${id}/secrets`)).body[0].value;

      expect(first.id).to.not.equal(second.id);
      expect(await secretOf(first.id)).to.not.equal(await secretOf(second.id));
    });

    it('rejects an unknown body field with 400 guard.invalid_input and details', async () => {
      const response = await call('post', 'applications', { name: 'Extra', type: 'SPA', colour: 'blue' });

      expectInvalidInput(response);
      expect(response.body.details).to.be.an('array').that.does.not.have.lengthOf(0);
      expect(response.body.details!.some(({ path, message }) => `${path} ${message}`.includes('colour'))).to.equal(
        true,
      );
    });

    it('rejects a malformed JSON body with 400 guard.invalid_input', async () => {
      const { body: token } = await service.token(adminClient.id, adminClient.secret, {
        grant_type: 'client_credentials',
        resource: service.config.managementApiResource,
        scope: 'all',
      });
      const response = await got.post(`${service.url}/api/applications`, {
        body: '{"name": "Broken", "type": ',
        headers: { authorization: `Bearer ${String(token.access_token)}`, 'content-type': 'application/json' },
        throwHttpErrors: false,
        responseType: 'json',
      });

      expect(response.statusCode).to.equal(400);
      expect((response.body as ErrorBody).code).to.equal('guard.invalid_input');
    });

    it('rejects fields of the wrong type with 400', async () => {
      expectInvalidInput(await call('post', 'applications', { name: 123, type: 'SPA' }));
      expectInvalidInput(await call('post', 'applications', { name: 'Typed', type: 'Spaceship' }));
      expectInvalidInput(
        await call('post', 'applications', { name: 'Typed', type: 'SPA', customData: ['not', 'an', 'object'] }),
      );
    });

    it('rejects a missing name or type with 400', async () => {
      expectInvalidInput(await call('post', 'applications', { type: 'SPA' }));
      expectInvalidInput(await call('post', 'applications', { name: 'No type' }));
    });

    it('rejects a redirect URI with a fragment with 400', async () => {
      const response = await call('post', 'applications', {
        name: 'Fragment',
        type: 'Traditional',
        oidcClientMetadata: { redirectUris: ['https://app.example.com/callback#section'], postLogoutRedirectUris: [] },
      });

      expectInvalidInput(response);
      expect(response.body.details).to.be.an('array').that.does.not.have.lengthOf(0);
    });

    for (const type of ['SPA', 'Native'] as const) {
      it(`refuses token exchange for a public ${type} client with 422`, async () => {
        const response = await call('post', 'applications', {
          name: 'Public',
          type,
          customClientMetadata: { allowTokenExchange: true },
        });

        expect(response.statusCode).to.equal(422);
        expect(response.body.code).to.be.a('string').and.not.equal('');
      });
    }

    for (const type of ['Traditional', 'MachineToMachine'] as const) {
      it(`allows token exchange for a confidential ${type} client`, async () => {
        const application = await create({
          name: 'Confidential',
          type,
          customClientMetadata: { allowTokenExchange: true },
        });

        expect(application.customClientMetadata).to.deep.equal({ allowTokenExchange: true });
      });
    }
  });

  describe('GET /api/applications', () => {
    it('lists applications with a Total-Number header', async () => {
      const created = await create({ name: unique('listed'), type: 'SPA' });
      const response = await call<Application[]>('get', 'applications');

      expect(response.statusCode).to.equal(200);
      expect(response.body).to.be.an('array');
      expect(response.headers['total-number']).to.equal(String(response.body.length));
      const listed = response.body.find(({ id }) => id === created.id);
      expect(listed).to.deep.equal(created);
    });

    it('pages with page and page_size', async () => {
      const prefix = unique('paged');
      const ids = [];
      for (let index = 0; index < 5; index++) {
        ids.push((await create({ name: `${prefix}-${index}`, type: 'Native' })).id);
      }

      const pages = [];
      for (const page of [1, 2, 3]) {
        const response = await call<Application[]>('get', `applications?search=${prefix}%25&page=${page}&page_size=2`);
        expect(response.statusCode).to.equal(200);
        expect(response.headers['total-number']).to.equal('5');
        pages.push(response.body.map(({ id }) => id));
      }

      expect(pages.map((page) => page.length)).to.deep.equal([2, 2, 1]);
      expect(pages.flat()).to.have.members(ids);
    });

    it('rejects an invalid page_size with 400', async () => {
      expectInvalidInput(await call('get', 'applications?page_size=0'));
      expectInvalidInput(await call('get', 'applications?page=abc'));
    });

    it('filters by one type', async () => {
      const spa = await create({ name: unique('typed'), type: 'SPA' });
      const native = await create({ name: unique('typed'), type: 'Native' });

      const response = await call<Application[]>('get', 'applications?types=SPA');

      expect(response.statusCode).to.equal(200);
      expect(response.body.map(({ type }) => type)).to.satisfy((listed: string[]) =>
        listed.every((type) => type === 'SPA'),
      );
      const ids = response.body.map(({ id }) => id);
      expect(ids).to.include(spa.id).and.not.include(native.id);
      expect(response.headers['total-number']).to.equal(String(response.body.length));
    });

    it('filters by several types given as a repeated parameter', async () => {
      const spa = await create({ name: unique('typed'), type: 'SPA' });
      const native = await create({ name: unique('typed'), type: 'Native' });
      const traditional = await create({ name: unique('typed'), type: 'Traditional' });

      const response = await call<Application[]>('get', 'applications?types=SPA&types=Native');

      expect(response.statusCode).to.equal(200);
      expect(new Set(response.body.map(({ type }) => type))).to.deep.equal(new Set(['SPA', 'Native']));
      const ids = response.body.map(({ id }) => id);
      expect(ids).to.include.members([spa.id, native.id]).and.not.include(traditional.id);
    });

    it('rejects an unknown type with 400', async () => {
      expectInvalidInput(await call('get', 'applications?types=Spaceship'));
    });

    it('searches names and descriptions, case-insensitively', async () => {
      const word = unique('needle');
      const byName = await create({ name: `Has ${word} in its name`, type: 'SPA' });
      const byDescription = await create({
        name: unique('other'),
        type: 'SPA',
        description: `About ${word.toUpperCase()}`,
      });
      await create({ name: unique('haystack'), type: 'SPA' });

      const response = await call<Application[]>('get', `applications?search=%25${word}%25`);

      expect(response.statusCode).to.equal(200);
      expect(response.body.map(({ id }) => id)).to.have.members([byName.id, byDescription.id]);
      expect(response.headers['total-number']).to.equal('2');
    });

    it('reads \\% and \\_ in a search as plain characters, % and _ as wildcards', async () => {
      const prefix = unique('wild');
      const literal = await create({ name: `${prefix} 100%_done`, type: 'SPA' });
      const other = await create({ name: `${prefix} 100 and done`, type: 'SPA' });

      const plainly = await call<Application[]>('get', `applications?search=${encodeURIComponent('%100\\%\\_d%')}`);
      expect(plainly.body.map(({ id }) => id)).to.deep.equal([literal.id]);
      const wildly = await call<Application[]>('get', `applications?search=${encodeURIComponent(`${prefix} 100%_d%`)}`);
      expect(wildly.body.map(({ id }) => id)).to.have.members([literal.id, other.id]);
    });
  });

  describe('GET /api/applications/:id', () => {
    it('returns the application', async () => {
      const created = await create({ name: 'Fetched', type: 'Traditional', description: 'to fetch' });
      const response = await call<Application>('get', `applications/${created.id}`);

      expect(response.statusCode).to.equal(200);
      expect(response.body).to.deep.include(created);
    });

    it('tells whether the application is an admin, as Logto does', async () => {
      const created = await create({ name: 'Not an admin', type: 'MachineToMachine' });
      const plain = await call<Application & { isAdmin: boolean }>('get', `applications/${created.id}`);
      const admin = await call<Application & { isAdmin: boolean }>('get', `applications/${adminClient.id}`);

      expect(plain.statusCode).to.equal(200);
      expect(plain.body.isAdmin).to.equal(false);
      expect(admin.statusCode).to.equal(200);
      expect(admin.body.isAdmin).to.equal(true);
    });

    it('answers 404 entity.not_exists_with_id for an unknown id', async () => {
      const response = await call('get', 'applications/no-such-application');

      expect(response.statusCode).to.equal(404);
      expect(response.body.code).to.equal('entity.not_exists_with_id');
    });
  });

  describe('PATCH /api/applications/:id', () => {
    it('updates the name and description', async () => {
      const created = await create({ name: 'Old name', type: 'SPA', description: 'old' });
      const response = await call<Application>('patch', `applications/${created.id}`, {
        name: 'New name',
        description: 'new',
      });

      expect(response.statusCode).to.equal(200);
      expect(response.body).to.deep.equal({ ...created, name: 'New name', description: 'new' });
      expect((await call<Application>('get', `applications/${created.id}`)).body).to.deep.include({
        name: 'New name',
        description: 'new',
      });
    });

    it('clears the description with null', async () => {
      const created = await create({ name: 'Described', type: 'SPA', description: 'to clear' });
      const response = await call<Application>('patch', `applications/${created.id}`, { description: null });

      expect(response.statusCode).to.equal(200);
      expect(response.body.description).to.equal(null);
    });

    it('merges oidcClientMetadata into what is there', async () => {
      const created = await create({
        name: 'Merged OIDC',
        type: 'Traditional',
        oidcClientMetadata: {
          redirectUris: ['https://app.example.com/callback'],
          postLogoutRedirectUris: ['https://app.example.com'],
        },
      });
      const response = await call<Application>('patch', `applications/${created.id}`, {
        oidcClientMetadata: { redirectUris: ['https://app.example.com/new-callback'] },
      });

      expect(response.statusCode).to.equal(200);
      expect(response.body.oidcClientMetadata).to.deep.equal({
        redirectUris: ['https://app.example.com/new-callback'],
        postLogoutRedirectUris: ['https://app.example.com'],
      });
      expect((await call<Application>('get', `applications/${created.id}`)).body.oidcClientMetadata).to.deep.equal(
        response.body.oidcClientMetadata,
      );
    });

    it("replaces customClientMetadata whole, as Logto's PATCH does", async () => {
      const created = await create({
        name: 'Replaced custom',
        type: 'Traditional',
        customClientMetadata: { idTokenTtl: 600 },
      });
      const response = await call<Application>('patch', `applications/${created.id}`, {
        customClientMetadata: { rotateRefreshToken: true },
      });

      expect(response.statusCode).to.equal(200);
      expect(response.body.customClientMetadata).to.deep.equal({ rotateRefreshToken: true });
      expect((await call<Application>('get', `applications/${created.id}`)).body.customClientMetadata).to.deep.equal({
        rotateRefreshToken: true,
      });
      const untouched = await call<Application>('patch', `applications/${created.id}`, { name: 'Renamed' });
      expect(untouched.body.customClientMetadata).to.deep.equal({ rotateRefreshToken: true });
    });

    it('sets customData', async () => {
      const created = await create({ name: 'Custom data', type: 'SPA', customData: { plan: 'free' } });
      const response = await call<Application>('patch', `applications/${created.id}`, {
        customData: { plan: 'pro', seats: 5 },
      });

      expect(response.statusCode).to.equal(200);
      expect(response.body.customData).to.deep.equal({ plan: 'pro', seats: 5 });
      expect((await call<Application>('get', `applications/${created.id}`)).body.customData).to.deep.equal({
        plan: 'pro',
        seats: 5,
      });
    });

    it('leaves everything else alone when the body is empty', async () => {
      const created = await create({ name: 'Untouched', type: 'Native', customData: { keep: true } });
      const response = await call<Application>('patch', `applications/${created.id}`, {});

      expect(response.statusCode).to.equal(200);
      expect(response.body).to.deep.equal(created);
    });

    it('answers 404 entity.not_exists_with_id for an unknown id', async () => {
      const response = await call('patch', 'applications/no-such-application', { name: 'Ghost' });

      expect(response.statusCode).to.equal(404);
      expect(response.body.code).to.equal('entity.not_exists_with_id');
    });

    it('rejects an unknown field, a wrong type and a fragment in a redirect URI with 400', async () => {
      const { id } = await create({ name: 'Guarded', type: 'Traditional' });

      const unknown = await call('patch', `applications/${id}`, { type: 'SPA' });
      expectInvalidInput(unknown);
      expect(unknown.body.details).to.be.an('array').that.does.not.have.lengthOf(0);
      expectInvalidInput(await call('patch', `applications/${id}`, { name: 123 }));
      expectInvalidInput(
        await call('patch', `applications/${id}`, {
          oidcClientMetadata: { redirectUris: ['https://app.example.com/cb#x'] },
        }),
      );
      expect((await call<Application>('get', `applications/${id}`)).body).to.include({
        name: 'Guarded',
        type: 'Traditional',
      });
    });

    for (const type of ['SPA', 'Native'] as const) {
      it(`refuses to turn on token exchange for a public ${type} client with 422`, async () => {
        const { id } = await create({ name: 'Public', type });
        const response = await call('patch', `applications/${id}`, {
          customClientMetadata: { allowTokenExchange: true },
        });

        expect(response.statusCode).to.equal(422);
        expect((await call<Application>('get', `applications/${id}`)).body.customClientMetadata).to.deep.equal({});
      });
    }

    for (const type of ['Traditional', 'MachineToMachine'] as const) {
      it(`turns on token exchange for a confidential ${type} client`, async () => {
        const { id } = await create({ name: 'Confidential', type });
        const response = await call<Application>('patch', `applications/${id}`, {
          customClientMetadata: { allowTokenExchange: true },
        });

        expect(response.statusCode).to.equal(200);
        expect(response.body.customClientMetadata).to.deep.equal({ allowTokenExchange: true });
      });
    }
  });

  describe('DELETE /api/applications/:id', () => {
    it('deletes with 204, after which the application is gone', async () => {
      const { id } = await create({ name: 'Doomed', type: 'SPA' });

      const response = await call('delete', `applications/${id}`);
      expect(response.statusCode).to.equal(204);
      expect(response.body).to.equal('');

      const fetched = await call('get', `applications/${id}`);
      expect(fetched.statusCode).to.equal(404);
      expect(fetched.body.code).to.equal('entity.not_exists_with_id');
      expect(
        (await call<Application[]>('get', 'applications')).body.map((application) => application.id),
      ).to.not.include(id);
    });

    it('answers 404 entity.not_exists_with_id for an unknown id', async () => {
      const response = await call('delete', 'applications/no-such-application');

      expect(response.statusCode).to.equal(404);
      expect(response.body.code).to.equal('entity.not_exists_with_id');
    });
  });

  describe('redirect URIs at the authorization endpoint', () => {
    const authorize = (clientId: string, redirectUri: string) =>
      service.http.get('oidc/auth', {
        searchParams: {
          client_id: clientId,
          redirect_uri: redirectUri,
          response_type: 'code',
          scope: 'openid',
          code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
          code_challenge_method: 'S256',
        },
        followRedirect: false,
        responseType: 'text',
      });

    /** oidc-provider renders an HTML error page rather than redirect to an unregistered URI. */
    function expectRedirectUriRefused(response: { statusCode: number; body: unknown }) {
      expect(response.statusCode).to.equal(400);
      expect(response.body).to.be.a('string').that.includes('invalid_redirect_uri');
    }

    it("takes a Traditional app's new redirect URI into effect immediately", async () => {
      const { id } = await create({
        name: 'Redirecting',
        type: 'Traditional',
        oidcClientMetadata: { redirectUris: ['https://app.example.com/callback'], postLogoutRedirectUris: [] },
      });
      const newUri = 'https://app.example.com/new-callback';

      expectRedirectUriRefused(await authorize(id, newUri));

      const patched = await call('patch', `applications/${id}`, { oidcClientMetadata: { redirectUris: [newUri] } });
      expect(patched.statusCode).to.equal(200);

      const after = await authorize(id, newUri);
      expect(after.statusCode, after.body).to.equal(303);
      expect(after.headers.location).to.be.a('string').and.not.include('error=');

      expectRedirectUriRefused(await authorize(id, 'https://app.example.com/callback'));
    });
  });
});
