import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import SwaggerParser from '@apidevtools/swagger-parser';
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
  operationId?: string;
  tags?: string[];
  summary?: string;
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { schema: Schema }> };
  responses: Record<string, unknown>;
};
type OpenApiDocument = {
  openapi: string;
  info: { title: string; version: string };
  tags?: Array<{ name: string; description?: string }>;
  paths: Partial<Record<string, Partial<Record<string, Operation>>>>;
};

const methods = ['get', 'post', 'put', 'patch', 'delete'];
const root = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Logto's operation ids by `method path` (parameters as `{}`), read from the types `@logto/api`
 * generates from Logto's own OpenAPI document (`paths` → `operations["ListUsers"]`).
 */
async function logtoOperationIds(): Promise<Map<string, string>> {
  const types = await readFile(join(root, 'node_modules/@logto/api/lib/generated-types/management.d.ts'), 'utf8');
  const ids = new Map<string, string>();
  let path: string | undefined;
  for (const line of types.slice(0, types.indexOf('export interface operations')).split('\n')) {
    path = /^ {4}"(\/[^"]*)": \{/.exec(line)?.[1] ?? path;
    const operation = /^ {8}(get|put|post|patch|delete): operations\["(\w+)"\]/.exec(line);
    if (operation && path) {
      ids.set(`${operation[1]} ${path.replace(/\{[^}]+\}/g, '{}')}`, operation[2]);
    }
  }
  return ids;
}

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

  /** Every operation of the document, with its `method path`. */
  const operations = () =>
    documented().map((route) => {
      const [method, path] = route.split(' ');
      return { route, method, path, operation: operation(method, path) };
    });

  it('names every operation with an operation id, none twice', () => {
    const ids = operations().map(({ operation: { operationId } }) => operationId);

    expect(ids.filter((id) => typeof id !== 'string' || !/^[A-Z][A-Za-z]+$/.test(id))).to.deep.equal([]);
    expect(ids.filter((id, index) => ids.indexOf(id) !== index)).to.deep.equal([]);
  });

  it('names every operation Logto has as Logto does (ListUsers, AssignUserRoles…)', async () => {
    const logto = await logtoOperationIds();
    expect(logto.get('get /api/users')).to.equal('ListUsers');

    const shared = operations().filter(({ method, path }) =>
      logto.has(`${method} ${path.replace(/\{[^}]+\}/g, '{}')}`),
    );
    const different = shared
      .map(({ route, method, path, operation: { operationId } }) => ({
        route,
        ours: operationId,
        logto: logto.get(`${method} ${path.replace(/\{[^}]+\}/g, '{}')}`),
      }))
      .filter(({ ours, logto: theirs }) => ours !== theirs);

    expect(shared.length).to.be.above(100);
    expect(different).to.deep.equal([]);
    expect(operation('get', '/api/users/{userId}').operationId).to.equal('GetUser');
    expect(operation('get', '/api/applications/{applicationId}/roles').operationId).to.equal('ListApplicationRoles');
    expect(operation('post', '/api/organizations/{id}/users').operationId).to.equal('AddOrganizationUsers');
  });

  it("names the Experience and Account APIs' operations as Logto does", () => {
    expect(operation('put', '/api/experience').operationId).to.equal('InitInteraction');
    expect(operation('post', '/api/experience/identification').operationId).to.equal('IdentifyUser');
    expect(operation('post', '/api/experience/verification/password').operationId).to.equal(
      'CreatePasswordVerification',
    );
    expect(operation('get', '/api/my-account').operationId).to.equal('GetProfile');
  });

  it('tags every operation with one domain tag, each declared with a description', () => {
    const declared = new Map((document.tags ?? []).map(({ name, description }) => [name, description]));
    for (const { route, operation: found } of operations()) {
      expect(found.tags, route).to.have.lengthOf(1);
      expect(declared.get(found.tags?.[0] ?? ''), `${route}: tag ${found.tags?.[0]}`)
        .to.be.a('string')
        .and.not.equal('');
    }
    expect(operation('get', '/api/users').tags).to.deep.equal(['Users']);
    expect(operation('get', '/api/organization-roles').tags).to.deep.equal(['Organization roles']);
  });

  it('needs no token for the open routes, and a bearer token for the management API', () => {
    const security = (method: string, path: string) =>
      (operation(method, path) as Operation & { security?: unknown[] }).security;

    expect(security('get', '/api/swagger.json')).to.deep.equal([]);
    expect(security('get', '/api/status')).to.deep.equal([]);
    expect(security('get', '/api/users')).to.equal(undefined);
  });

  it('is valid for @apidevtools/swagger-parser', async () => {
    await SwaggerParser.validate(structuredClone(document) as never);
  });

  it('passes `redocly lint` (redocly.yaml) with no error and no warning, offline', async function () {
    this.timeout(60_000);
    const directory = await mkdtemp(join(tmpdir(), 'openapi-'));
    try {
      const file = join(directory, 'swagger.json');
      await writeFile(file, JSON.stringify(document));
      // Telemetry and the update check are the CLI's only network calls: both off.
      const { stdout } = await promisify(execFile)(
        join(root, 'node_modules/.bin/redocly'),
        ['lint', file, '--config', join(root, 'redocly.yaml'), '--format', 'json', '--max-problems', '1000'],
        { env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' } },
      ).catch((error: unknown) => {
        // It exits 1 when it finds problems: the report is still on stdout.
        const { stdout } = error as { stdout?: string };
        if (!stdout) {
          throw error;
        }
        return { stdout };
      });
      const report = JSON.parse(stdout) as {
        totals: { errors: number; warnings: number };
        problems: Array<{ ruleId: string; message: string; location: Array<{ pointer: string }> }>;
      };
      const problems = report.problems.map(
        ({ ruleId, message, location }) => `${ruleId}: ${message} at ${location[0]?.pointer}`,
      );

      expect(problems).to.deep.equal([]);
      expect(report.totals).to.include({ errors: 0, warnings: 0 });
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});
