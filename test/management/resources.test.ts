import { expect } from 'chai';

import { expectError } from '../support/expect.ts';
import { startService, type TestService } from '../support/service.ts';
import { omit, unique } from '../support/values.ts';

type Scope = {
  tenantId: string;
  id: string;
  resourceId: string;
  name: string;
  description: string | null;
  createdAt: number;
};
type Resource = {
  tenantId: string;
  id: string;
  name: string;
  indicator: string;
  isDefault: boolean;
  accessTokenTtl: number;
  isExchangeTarget: boolean;
  scopes?: Scope[];
};
type ErrorBody = { code: string; message: string; details?: unknown[] };
type Reply<T> = { statusCode: number; headers: Record<string, string | string[] | undefined>; body: T };

// Logto's fields, and `isExchangeTarget` (ours, docs/token-exchange.md).
const resourceKeys = ['tenantId', 'id', 'name', 'indicator', 'isDefault', 'accessTokenTtl', 'isExchangeTarget'];
const scopeKeys = ['tenantId', 'id', 'resourceId', 'name', 'description', 'createdAt'];

/** An indicator no other test uses. */
const newIndicator = () => `https://${unique('api')}.example.com`;

describe('management API: resources and scopes', () => {
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

  async function createResource(body: Partial<Resource> = {}): Promise<Resource> {
    const response = await call<Resource>('post', 'resources', {
      name: 'Orders API',
      indicator: newIndicator(),
      ...body,
    });
    expect(response.statusCode, JSON.stringify(response.body)).to.equal(201);
    return response.body;
  }

  async function createScope(resourceId: string, name: string, description?: string): Promise<Scope> {
    const response = await call<Scope>('post', `resources/${resourceId}/scopes`, { name, description });
    expect(response.statusCode, JSON.stringify(response.body)).to.equal(201);
    return response.body;
  }

  async function managementApiResource(): Promise<Resource> {
    const { body } = await call<Resource[]>('get', 'resources');
    const resource = body.find(({ indicator }) => indicator === service.config.managementApiResource);
    expect(resource, 'the management API resource is listed').to.not.equal(undefined);
    return resource!;
  }

  describe('resources', () => {
    it('creates a resource with 201 and an empty scopes list', async () => {
      const indicator = newIndicator();
      const response = await call<Resource>('post', 'resources', { name: 'Orders API', indicator });

      expect(response.statusCode).to.equal(201);
      expect(response.body).to.have.all.keys([...resourceKeys, 'scopes']);
      expect(response.body).to.deep.include({
        tenantId: 'default',
        name: 'Orders API',
        indicator,
        isDefault: false,
        accessTokenTtl: 3600,
        scopes: [],
      });
      expect(response.body.id).to.be.a('string').and.not.equal('');
    });

    it('keeps a given access token TTL', async () => {
      const resource = await createResource({ accessTokenTtl: 600 });

      expect(resource.accessTokenTtl).to.equal(600);
    });

    it('refuses a second resource with the same indicator with 422 resource.resource_identifier_in_use', async () => {
      const { indicator } = await createResource();

      expectError(
        await call('post', 'resources', { name: 'Copy', indicator }),
        422,
        'resource.resource_identifier_in_use',
      );
    });

    it('treats indicators that differ only in the case of their path as different resources', async () => {
      const { indicator } = await createResource();

      const upper = await call<Resource>('post', 'resources', { name: 'Upper', indicator: `${indicator}/Orders` });
      const lower = await call<Resource>('post', 'resources', { name: 'Lower', indicator: `${indicator}/orders` });

      expect(upper.statusCode, JSON.stringify(upper.body)).to.equal(201);
      expect(lower.statusCode, JSON.stringify(lower.body)).to.equal(201);
      expect(lower.body.indicator).to.equal(`${indicator}/orders`);
    });

    for (const [label, indicator] of [
      ['relative', 'orders/api'],
      ['with a fragment', 'https://api.example.com/orders#v1'],
    ]) {
      it(`rejects an indicator that is ${label} with 400`, async () => {
        expectError(await call('post', 'resources', { name: 'Bad', indicator }), 400, 'guard.invalid_input');
      });
    }

    it('rejects a body with an unknown field or no name with 400', async () => {
      expectError(
        await call('post', 'resources', { name: 'Extra', indicator: newIndicator(), isDefault: true }),
        400,
        'guard.invalid_input',
      );
      expectError(await call('post', 'resources', { indicator: newIndicator() }), 400, 'guard.invalid_input');
    });

    it('lists resources, with the management API and a Total-Number header', async () => {
      const created = await createResource();
      const response = await call<Resource[]>('get', 'resources');

      expect(response.statusCode).to.equal(200);
      expect(response.headers['total-number']).to.equal(String(response.body.length));
      expect(response.body).to.deep.include(omit(created, 'scopes'));
      expect(response.body.map(({ indicator }) => indicator)).to.include(service.config.managementApiResource);
      for (const resource of response.body) {
        expect(resource).to.have.all.keys(resourceKeys);
      }
    });

    it("includes each resource's scopes with ?includeScopes=true", async () => {
      const resource = await createResource();
      const read = await createScope(resource.id, 'read:orders');
      const write = await createScope(resource.id, 'write:orders');

      const response = await call<Resource[]>('get', 'resources?includeScopes=true');

      expect(response.statusCode).to.equal(200);
      for (const listed of response.body) {
        expect(listed.scopes).to.be.an('array');
      }
      const listed = response.body.find(({ id }) => id === resource.id);
      expect(listed?.scopes).to.have.deep.members([read, write]);
      const managementApi = response.body.find(({ indicator }) => indicator === service.config.managementApiResource);
      expect(managementApi?.scopes?.map(({ name }) => name)).to.deep.equal(['all']);
    });

    it('returns one resource', async () => {
      const created = omit(await createResource({ name: 'One' }), 'scopes');
      const response = await call<Resource>('get', `resources/${created.id}`);

      expect(response.statusCode).to.equal(200);
      expect(response.body).to.deep.equal(created);
    });

    it('answers 404 entity.not_exists_with_id for an unknown resource', async () => {
      expectError(await call('get', 'resources/unknown'), 404, 'entity.not_exists_with_id');
      expectError(await call('patch', 'resources/unknown', { name: 'Ghost' }), 404, 'entity.not_exists_with_id');
      expectError(await call('delete', 'resources/unknown'), 404, 'entity.not_exists_with_id');
    });

    it('updates the name and access token TTL', async () => {
      const created = omit(await createResource({ name: 'Before' }), 'scopes');

      const renamed = await call<Resource>('patch', `resources/${created.id}`, { name: 'After' });
      expect(renamed.statusCode).to.equal(200);
      expect(renamed.body).to.deep.equal({ ...created, name: 'After' });

      const retimed = await call<Resource>('patch', `resources/${created.id}`, { accessTokenTtl: 7200 });
      expect(retimed.statusCode).to.equal(200);
      expect(retimed.body).to.deep.equal({ ...created, name: 'After', accessTokenTtl: 7200 });

      expect((await call<Resource>('get', `resources/${created.id}`)).body).to.deep.equal(retimed.body);
    });

    it('rejects a non-numeric TTL with 400', async () => {
      const created = await createResource();

      expectError(
        await call('patch', `resources/${created.id}`, { accessTokenTtl: 'long' }),
        400,
        'guard.invalid_input',
      );
      expect((await call<Resource>('get', `resources/${created.id}`)).body.indicator).to.equal(created.indicator);
    });

    it('makes one resource the default, and only one', async () => {
      const first = await createResource();
      const second = await createResource();

      const setFirst = await call<Resource>('patch', `resources/${first.id}/is-default`, { isDefault: true });
      expect(setFirst.statusCode).to.equal(200);
      expect(setFirst.body).to.include({ id: first.id, isDefault: true });
      expect((await call<Resource>('get', `resources/${first.id}`)).body.isDefault).to.equal(true);

      const setSecond = await call<Resource>('patch', `resources/${second.id}/is-default`, { isDefault: true });
      expect(setSecond.body).to.include({ id: second.id, isDefault: true });
      expect((await call<Resource>('get', `resources/${first.id}`)).body.isDefault).to.equal(false);

      const unset = await call<Resource>('patch', `resources/${second.id}/is-default`, { isDefault: false });
      expect(unset.statusCode).to.equal(200);
      expect(unset.body.isDefault).to.equal(false);
      const { body: all } = await call<Resource[]>('get', 'resources');
      expect(all.filter(({ isDefault }) => isDefault)).to.deep.equal([]);
    });

    it('rejects an is-default body without a boolean with 400', async () => {
      const { id } = await createResource();

      expectError(await call('patch', `resources/${id}/is-default`, { isDefault: 'yes' }), 400, 'guard.invalid_input');
      expectError(await call('patch', `resources/${id}/is-default`, {}), 400, 'guard.invalid_input');
    });

    it('deletes a resource with 204, after which it is gone', async () => {
      const { id } = await createResource();

      const response = await call('delete', `resources/${id}`);
      expect(response.statusCode).to.equal(204);
      expect(response.body).to.equal('');

      expectError(await call('get', `resources/${id}`), 404, 'entity.not_exists_with_id');
      expectError(await call('delete', `resources/${id}`), 404, 'entity.not_exists_with_id');
      expect((await call<Resource[]>('get', 'resources')).body.map((resource) => resource.id)).to.not.include(id);
    });

    it('deletes the scopes of a deleted resource', async () => {
      const { id } = await createResource();
      const scope = await createScope(id, 'read:doomed');

      expect((await call('delete', `resources/${id}`)).statusCode).to.equal(204);

      expectError(await call('get', `resources/${id}/scopes`), 404, 'entity.not_exists_with_id');
      const { body: listed } = await call<Resource[]>('get', 'resources?includeScopes=true');
      expect(listed.flatMap(({ scopes = [] }) => scopes).map(({ id: scopeId }) => scopeId)).to.not.include(scope.id);
      // A role cannot be given a scope that no longer exists.
      const role = await call('post', 'roles', {
        name: `holder-${scope.id}`,
        description: 'holds a deleted scope',
        scopeIds: [scope.id],
      });
      expectError(role, 404, 'entity.not_exists_with_id');
    });

    it('refuses to delete the management API resource', async () => {
      const managementApi = await managementApiResource();

      expectError(await call('delete', `resources/${managementApi.id}`), 400, 'resource.cannot_delete_management_api');
      expect((await call('get', `resources/${managementApi.id}`)).statusCode).to.equal(200);
    });

    it("refuses to rename the management API or change its lifetime (Logto's 400)", async () => {
      const managementApi = await managementApiResource();

      for (const json of [{ name: 'new-name' }, { accessTokenTtl: 60 }, {}]) {
        expectError(
          await call('patch', `resources/${managementApi.id}`, json),
          400,
          'resource.cannot_modify_management_api',
        );
      }
      expect((await call<Resource>('get', `resources/${managementApi.id}`)).body).to.include({
        name: managementApi.name,
        accessTokenTtl: managementApi.accessTokenTtl,
      });
    });

    it("keeps a resource's indicator when a PATCH names another (Logto ignores it)", async () => {
      const resource = await createResource();
      const response = await call<Resource>('patch', `resources/${resource.id}`, {
        name: 'Renamed',
        indicator: 'https://elsewhere.example.com',
      });

      expect(response.statusCode).to.equal(200);
      expect(response.body).to.include({ id: resource.id, name: 'Renamed', indicator: resource.indicator });
    });
  });

  describe('scopes', () => {
    let resource: Resource;

    beforeEach(async () => {
      resource = await createResource();
    });

    it('creates a scope with 201', async () => {
      const before = Date.now();
      const response = await call<Scope>('post', `resources/${resource.id}/scopes`, {
        name: 'read:orders',
        description: 'Read orders',
      });

      expect(response.statusCode).to.equal(201);
      expect(response.body).to.have.all.keys(scopeKeys);
      expect(response.body).to.include({
        tenantId: 'default',
        resourceId: resource.id,
        name: 'read:orders',
        description: 'Read orders',
      });
      expect(response.body.id).to.be.a('string').and.not.equal('');
      expect(response.body.createdAt)
        .to.be.a('number')
        .within(before - 1000, Date.now() + 1000);
    });

    it('gives a scope without a description a null one', async () => {
      expect((await createScope(resource.id, 'read:plain')).description).to.equal(null);
    });

    it('rejects a scope name with a space with 400', async () => {
      expectError(
        await call('post', `resources/${resource.id}/scopes`, { name: 'read orders' }),
        400,
        'guard.invalid_input',
      );
    });

    it('refuses a duplicate name in the same resource with 422 scope.name_exists', async () => {
      await createScope(resource.id, 'read:orders');

      expectError(
        await call('post', `resources/${resource.id}/scopes`, { name: 'read:orders' }),
        422,
        'scope.name_exists',
      );
    });

    it('treats scope names as case-sensitive, as OAuth does', async () => {
      await createScope(resource.id, 'read:orders');

      const upper = await call<Scope>('post', `resources/${resource.id}/scopes`, { name: 'Read:Orders' });

      expect(upper.statusCode, JSON.stringify(upper.body)).to.equal(201);
      expect(upper.body.name).to.equal('Read:Orders');
      expect(
        (await call<Scope[]>('get', `resources/${resource.id}/scopes`)).body.map(({ name }) => name),
      ).to.have.members(['read:orders', 'Read:Orders']);
    });

    it('allows the same name in another resource', async () => {
      const other = await createResource();
      await createScope(resource.id, 'read:orders');

      const scope = await createScope(other.id, 'read:orders');
      expect(scope.resourceId).to.equal(other.id);
    });

    it('answers 404 when the resource does not exist', async () => {
      expectError(
        await call('post', 'resources/unknown/scopes', { name: 'read:orders' }),
        404,
        'entity.not_exists_with_id',
      );
      expectError(await call('get', 'resources/unknown/scopes'), 404, 'entity.not_exists_with_id');
    });

    it('lists the scopes of a resource, and only those, with a Total-Number header', async () => {
      const read = await createScope(resource.id, 'read:orders');
      const write = await createScope(resource.id, 'write:orders');
      const other = await createResource();
      await createScope(other.id, 'read:orders');

      const response = await call<Scope[]>('get', `resources/${resource.id}/scopes`);

      expect(response.statusCode).to.equal(200);
      expect(response.body).to.have.deep.members([read, write]);
      expect(response.headers['total-number']).to.equal('2');
    });

    it('searches scopes by name and description', async () => {
      const read = await createScope(resource.id, 'read:orders', 'Look at orders');
      const refund = await createScope(resource.id, 'refund', 'Give money back for ORDERS');
      await createScope(resource.id, 'read:invoices', 'Look at invoices');

      const response = await call<Scope[]>('get', `resources/${resource.id}/scopes?search=%25orders%25`);

      expect(response.statusCode).to.equal(200);
      expect(response.body).to.have.deep.members([read, refund]);
      expect(response.headers['total-number']).to.equal('2');
    });

    it('pages the scopes with page and page_size', async () => {
      const names = ['a:1', 'a:2', 'a:3'];
      for (const name of names) {
        await createScope(resource.id, name);
      }

      const first = await call<Scope[]>('get', `resources/${resource.id}/scopes?page=1&page_size=2`);
      const second = await call<Scope[]>('get', `resources/${resource.id}/scopes?page=2&page_size=2`);

      expect(first.headers['total-number']).to.equal('3');
      expect(first.body).to.have.length(2);
      expect(second.body).to.have.length(1);
      expect([...first.body, ...second.body].map(({ name }) => name)).to.have.members(names);
    });

    it('renames a scope and changes its description', async () => {
      const scope = await createScope(resource.id, 'read:orders', 'old');

      const response = await call<Scope>('patch', `resources/${resource.id}/scopes/${scope.id}`, {
        name: 'view:orders',
        description: 'new',
      });

      expect(response.statusCode).to.equal(200);
      expect(response.body).to.deep.equal({ ...scope, name: 'view:orders', description: 'new' });
      expect((await call<Scope[]>('get', `resources/${resource.id}/scopes`)).body).to.deep.equal([response.body]);
    });

    it('keeps a scope its own name when the rename is to the same name', async () => {
      const scope = await createScope(resource.id, 'read:orders');

      const response = await call<Scope>('patch', `resources/${resource.id}/scopes/${scope.id}`, {
        name: 'read:orders',
      });

      expect(response.statusCode).to.equal(200);
      expect(response.body).to.deep.equal(scope);
    });

    it('refuses to rename a scope to a name in use in its resource with 422 scope.name_exists', async () => {
      await createScope(resource.id, 'read:orders');
      const write = await createScope(resource.id, 'write:orders');

      const response = await call('patch', `resources/${resource.id}/scopes/${write.id}`, { name: 'read:orders' });

      expectError(response, 422, 'scope.name_exists');
      expect(
        (await call<Scope[]>('get', `resources/${resource.id}/scopes`)).body.map(({ name }) => name),
      ).to.have.members(['read:orders', 'write:orders']);
    });

    it('rejects a rename to a name with a space with 400', async () => {
      const scope = await createScope(resource.id, 'read:orders');

      expectError(
        await call('patch', `resources/${resource.id}/scopes/${scope.id}`, { name: 'read orders' }),
        400,
        'guard.invalid_input',
      );
    });

    it('deletes a scope with 204', async () => {
      const scope = await createScope(resource.id, 'read:orders');

      const response = await call('delete', `resources/${resource.id}/scopes/${scope.id}`);

      expect(response.statusCode).to.equal(204);
      expect((await call<Scope[]>('get', `resources/${resource.id}/scopes`)).body).to.deep.equal([]);
      expectError(
        await call('delete', `resources/${resource.id}/scopes/${scope.id}`),
        404,
        'entity.not_exists_with_id',
      );
    });

    it('answers 404 for an unknown scope, or a scope of another resource', async () => {
      const other = await createResource();
      const foreign = await createScope(other.id, 'read:orders');

      for (const scopeId of ['unknown', foreign.id]) {
        expectError(
          await call('patch', `resources/${resource.id}/scopes/${scopeId}`, { name: 'x' }),
          404,
          'entity.not_exists_with_id',
        );
        expectError(
          await call('delete', `resources/${resource.id}/scopes/${scopeId}`),
          404,
          'entity.not_exists_with_id',
        );
      }
      expect((await call<Scope[]>('get', `resources/${other.id}/scopes`)).body).to.deep.equal([foreign]);
    });

    it("refuses to delete the management API's all scope", async () => {
      const managementApi = await managementApiResource();
      const { body: scopes } = await call<Scope[]>('get', `resources/${managementApi.id}/scopes`);
      const all = scopes.find(({ name }) => name === 'all');
      expect(all, 'the management API has an `all` scope').to.not.equal(undefined);

      const response = await call('delete', `resources/${managementApi.id}/scopes/${all!.id}`);

      expect(response.statusCode).to.equal(400);
      expect(response.body.code).to.equal('resource.cannot_delete_management_api');
      expect((await call<Scope[]>('get', `resources/${managementApi.id}/scopes`)).body).to.deep.include(all);
    });
  });
});
