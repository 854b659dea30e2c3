import type Router from '@koa/router';
import { expect } from 'chai';

import { startService, type TestService } from '../support/service.ts';

type Schema = {
  type?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
};
type Parameter = { name: string; in: string; required?: boolean; schema?: Schema };
type Operation = {
  summary?: string;
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { schema: Schema }> };
  responses: Record<string, unknown>;
};
type OpenApiDocument = {
  openapi: string;
  info: { title: string; version: string };
  paths: Partial<Record<string, Partial<Record<string, Operation>>>>;
};

const methods = ['get', 'post', 'put', 'patch', 'delete'];

/** The operations Logto clients rely on, as `method path` in OpenAPI notation. */
const expectedOperations = [
  'get /api/applications',
  'post /api/applications',
  'get /api/applications/{id}',
  'patch /api/applications/{id}',
  'delete /api/applications/{id}',
  'get /api/resources',
  'post /api/resources',
  'get /api/resources/{id}',
  'patch /api/resources/{id}',
  'delete /api/resources/{id}',
  'patch /api/resources/{id}/is-default',
  'get /api/resources/{resourceId}/scopes',
  'post /api/resources/{resourceId}/scopes',
  'patch /api/resources/{resourceId}/scopes/{scopeId}',
  'delete /api/resources/{resourceId}/scopes/{scopeId}',
  'get /api/roles/{id}/scopes',
  'post /api/roles/{id}/scopes',
  'post /api/configs/oidc/{keyType}/rotate',
];

describe('management API: OpenAPI document', () => {
  let service: TestService;
  let document: OpenApiDocument;

  before(async () => {
    service = await startService();
    const response = await service.http.get('api/swagger.json');
    expect(response.statusCode).to.equal(200);
    document = response.body;
  });
  after(() => service.stop());

  /** Every `method path` the document describes. */
  const documented = () =>
    Object.entries(document.paths).flatMap(([path, item]) =>
      Object.keys(item ?? {})
        .filter((method) => methods.includes(method))
        .map((method) => `${method} ${path}`),
    );

  /** Every `method path` the service's /api routers answer, read from the running app. */
  function served(): string[] {
    const routers = service.service.app.middleware
      .map((middleware) => (middleware as { router?: Router }).router)
      .filter((router): router is Router => router !== undefined);
    return routers.flatMap((router) =>
      router.stack.flatMap((layer) =>
        layer.methods
          .map((method) => method.toLowerCase())
          .filter((method) => methods.includes(method))
          .map((method) => `${method} ${String(layer.path).replace(/:(\w+)/g, '{$1}')}`),
      ),
    );
  }

  const operation = (method: string, path: string): Operation => {
    const found = document.paths[path]?.[method];
    if (found === undefined) {
      expect.fail(`${method} ${path} is not documented`);
    }
    return found;
  };

  it('is served without a token, as JSON', async () => {
    const response = await service.http.get('api/swagger.json', { headers: {} });

    expect(response.statusCode).to.equal(200);
    expect(response.headers['content-type']).to.match(/^application\/json/);
  });

  it('is an OpenAPI 3 document', () => {
    expect(document.openapi).to.match(/^3\.\d+\.\d+$/);
    expect(document.info.title).to.be.a('string').and.not.equal('');
    expect(document.info.version).to.be.a('string').and.not.equal('');
    expect(document.paths).to.be.an('object');
    expect(Object.keys(document.paths)).to.not.have.lengthOf(0);
  });

  it('describes the operations Logto clients use', () => {
    expect(documented()).to.include.members(expectedOperations);
  });

  it('describes every route the service answers under /api', () => {
    const routes = served().filter((route) => route.split(' ')[1].startsWith('/api/'));
    expect(routes).to.include.members(expectedOperations);

    const undocumented = routes.filter((route) => !documented().includes(route));
    expect(undocumented, 'routes missing from the document').to.deep.equal([]);
  });

  it('describes nothing the service does not answer', () => {
    const unserved = documented().filter((route) => !served().includes(route));
    expect(unserved, 'documented operations without a route').to.deep.equal([]);
  });

  it('declares every path parameter as a required path parameter, and gives every operation a response', () => {
    for (const route of documented()) {
      const [method, path] = route.split(' ');
      const { parameters = [], responses } = operation(method, path);
      const inPath = [...path.matchAll(/\{(\w+)\}/g)].map(([, name]) => name);
      const declared = parameters.filter((parameter) => parameter.in === 'path');

      expect(
        declared.map(({ name }) => name),
        route,
      ).to.have.members(inPath);
      expect(
        declared.every(({ required }) => required === true),
        route,
      ).to.equal(true);
      expect(Object.keys(responses), route).to.not.have.lengthOf(0);
    }
  });

  it('documents the paging, type and search parameters of GET /api/applications', () => {
    const names = (operation('get', '/api/applications').parameters ?? [])
      .filter((p) => p.in === 'query')
      .map(({ name }) => name);

    expect(names).to.include.members(['page', 'page_size', 'types', 'search']);
  });

  it('requires name and type and allows no other properties in the body of POST /api/applications', () => {
    const { requestBody } = operation('post', '/api/applications');
    const schema = requestBody?.content['application/json']?.schema;

    expect(schema?.type).to.equal('object');
    expect(schema?.required).to.include.members(['name', 'type']);
    expect(schema?.additionalProperties).to.equal(false);
    expect(schema?.properties).to.include.keys(
      'name',
      'type',
      'description',
      'oidcClientMetadata',
      'customClientMetadata',
      'customData',
    );
  });

  it('documents 200 for POST /api/applications and 201 for POST /api/resources, as Logto does', () => {
    expect(operation('post', '/api/applications').responses).to.have.property('200');
    expect(operation('post', '/api/resources').responses).to.have.property('201');
    expect(operation('post', '/api/resources/{resourceId}/scopes').responses).to.have.property('201');
    expect(operation('delete', '/api/applications/{id}').responses).to.have.property('204');
  });
});
