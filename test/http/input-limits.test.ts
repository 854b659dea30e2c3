import { expect } from 'chai';

import {
  alternatives,
  apiOperations,
  type Operation,
  operationUrl,
  requiredQuery,
  sample,
  type Schema,
} from '../support/openapi.ts';
import { type HttpResponse, startService, type TestService } from '../support/service.ts';

/**
 * Driven by the OpenAPI document (built from the routes' own schemas), so a new route is covered
 * without a new test: every string, list and map of every JSON body declares a limit, and a value
 * over it is 400 `guard.invalid_input` naming the field, before anything is stored.
 */

type Segment = string | number;
/** `value` is the whole body, over the limit at `path` and otherwise as valid as samples make it. */
type Probe = { path: Segment[]; value: unknown };

const deep = (levels: number) => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;

/** An object's fixed fields (a union's discriminator) and samples of its required ones. */
function baseOf(schema: Schema): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(schema.properties ?? {})
      .filter(
        ([key, property]) =>
          schema.required?.includes(key) || property.const !== undefined || property.enum?.length === 1,
      )
      .map(([key, property]) => [key, sample(property)]),
  );
}

/** Values one past each limit in `schema`; what declares no limit goes to `unlimited`. */
function oversized(schema: Schema, path: Segment[], unlimited: string[]): Probe[] {
  const options = alternatives(schema);
  if (options.length > 1 || options[0] !== schema) {
    return options.flatMap((option) => oversized(option, path, unlimited));
  }
  const where = path.join('.') || '(body)';
  if (schema.type === 'string' && schema.enum === undefined && schema.const === undefined) {
    if (schema.maxLength === undefined) {
      unlimited.push(`${where}: a string without maxLength`);
      return [];
    }
    return [{ path, value: 'x'.repeat(schema.maxLength + 1) }];
  }
  if (schema.type === 'array') {
    const items = schema.items ?? {};
    const inner = oversized(items, [...path, 0], unlimited).map((probe) => ({
      path: probe.path,
      value: [probe.value],
    }));
    if (schema.maxItems === undefined) {
      unlimited.push(`${where}: a list without maxItems`);
      return inner;
    }
    return [{ path, value: Array.from({ length: schema.maxItems + 1 }, () => sample(items)) }, ...inner];
  }
  const base = baseOf(schema);
  const probes = Object.entries(schema.properties ?? {}).flatMap(([key, property]) =>
    oversized(property, [...path, key], unlimited).map((probe) => ({
      path: probe.path,
      value: { ...base, [key]: probe.value },
    })),
  );
  const values = schema.additionalProperties;
  if (values && typeof values === 'object') {
    const maxBytes = schema['x-max-bytes'];
    if (maxBytes !== undefined) {
      probes.push({ path, value: { key: 'x'.repeat(maxBytes) } });
    } else if (schema.maxProperties !== undefined) {
      probes.push({
        path,
        value: Object.fromEntries(
          Array.from({ length: schema.maxProperties + 1 }, (_, index) => [`k${index}`, sample(values)]),
        ),
      });
      probes.push(
        ...oversized(values, [...path, 'k'], unlimited).map((probe) => ({
          path: probe.path,
          value: { k: probe.value },
        })),
      );
    } else {
      unlimited.push(`${where}: a map without maxProperties or x-max-bytes`);
    }
  }
  return probes;
}

/** `{a: {b: [value]}}` for the path `a.b.0`. */
function bodyAt(path: Segment[], value: unknown): unknown {
  if (path.length === 0) {
    return value;
  }
  const [head, ...rest] = path;
  return typeof head === 'number' ? [bodyAt(rest, value)] : { [head]: bodyAt(rest, value) };
}

/** The JSON body fields that hold JSON of any shape (custom data, details, context). */
function freeJsonFields(schema: Schema, path: string[]): string[][] {
  const options = alternatives(schema);
  if (options.length > 1 || options[0] !== schema) {
    return options.flatMap((option) => freeJsonFields(option, path));
  }
  const own = schema['x-max-bytes'] === undefined ? [] : [path];
  return [
    ...own,
    ...Object.entries(schema.properties ?? {}).flatMap(([key, property]) => freeJsonFields(property, [...path, key])),
  ];
}

describe('input limits: every field of every JSON body', () => {
  let service: TestService;
  let operations: Array<Operation & { body: Schema }>;

  before(async () => {
    service = await startService();
    operations = (await apiOperations(service)).filter(
      (operation): operation is Operation & { body: Schema } => operation.body !== undefined,
    );
    expect(operations.length).to.be.greaterThan(80);
  });
  after(() => service.stop());

  const send = (operation: Operation, body: string): Promise<HttpResponse> =>
    service.api[operation.method](operationUrl(operation), {
      body,
      headers: { 'content-type': 'application/json' },
      searchParams: requiredQuery(operation),
    });

  it('every string, list and map declares a limit, and one over it is 400 naming the field', async function () {
    this.timeout(300_000);
    const unlimited: string[] = [];
    const wrong: string[] = [];
    let count = 0;
    for (const operation of operations) {
      const name = `${operation.method.toUpperCase()} ${operation.path}`;
      const fieldsUnlimited: string[] = [];
      const probes = oversized(operation.body, [], fieldsUnlimited);
      unlimited.push(...fieldsUnlimited.map((field) => `${name} ${field}`));
      for (const probe of probes) {
        count++;
        const response = await send(operation, JSON.stringify(probe.value));
        const paths = ((response.body?.details ?? []) as Array<{ path: string }>).map((detail) => detail.path);
        if (
          response.statusCode !== 400 ||
          response.body?.code !== 'guard.invalid_input' ||
          !paths.includes(probe.path.join('.'))
        ) {
          wrong.push(
            `${name} ${probe.path.join('.')}: ${response.statusCode} ${JSON.stringify(response.body).slice(0, 300)}`,
          );
        }
      }
    }
    console.log(`      input limits: ${count} values one past their limit, over ${operations.length} JSON bodies`);
    expect(unlimited, 'fields without a limit').to.deep.equal([]);
    expect(wrong, 'oversized values not refused with the field named').to.deep.equal([]);
    expect(count).to.be.greaterThan(200);
  });

  it('a body nested deeper than 32 levels, or holding a lone surrogate or a NUL, is 400 on every JSON route', async function () {
    this.timeout(300_000);
    const wrong: string[] = [];
    for (const operation of operations) {
      const name = `${operation.method.toUpperCase()} ${operation.path}`;
      const field =
        Object.keys(operation.body.properties ?? alternatives(operation.body)[0]?.properties ?? { a: {} })[0] ?? 'a';
      const bodies = [
        `{"${field}":${deep(5000)}}`,
        `{"${field}":${deep(32)}}`,
        `{"${field}":"\\ud800"}`,
        `{"${field}":"a\\udc00b"}`,
        `{"\\ud83d":1}`,
        // PostgreSQL's text cannot hold U+0000: refused on every engine, so that each answers alike.
        `{"${field}":"a\\u0000b"}`,
        `{"a\\u0000":1}`,
        // Where JSON of any shape is accepted, it is nested too deep all the same.
        ...freeJsonFields(operation.body, []).map((path) => JSON.stringify(bodyAt(path, {})).replace('{}', deep(5000))),
      ];
      for (const body of bodies) {
        const response = await send(operation, body);
        if (
          response.statusCode !== 400 ||
          response.body?.code !== 'guard.invalid_input' ||
          !/nested|surrogate|NUL/.test(String(response.body?.message))
        ) {
          wrong.push(
            `${name} ${body.slice(0, 40)}: ${response.statusCode} ${JSON.stringify(response.body).slice(0, 200)}`,
          );
        }
      }
    }
    expect(wrong).to.deep.equal([]);
  });

  it('a NUL in a path parameter or a query value is 400, not a lookup (PostgreSQL cannot compare it)', async () => {
    for (const [path, where] of [
      ['users/a%00b', 'path'],
      ['applications/%00', 'path'],
      ['users?search=%00', 'query'],
      ['roles?search.name=a%00&mode.name=like', 'query'],
    ]) {
      const response = await service.api.get(path);
      expect(response.statusCode, `${path}: ${JSON.stringify(response.body)}`).to.equal(400);
      expect(response.body).to.include({
        code: 'guard.invalid_input',
        message: `The request ${where} holds a NUL character (\\u0000).`,
      });
    }
    // The text "%00" itself is no NUL.
    expect((await service.api.get('users/a%2500b')).statusCode).to.equal(404);
  });

  it('31 levels of nesting and well-formed surrogate pairs are accepted', async () => {
    const created = await service.api.post('users', {
      json: { customData: JSON.parse(deep(30)), name: 'Ada \u{1F600}' },
    });
    expect(created.statusCode, JSON.stringify(created.body)).to.equal(200);
    expect(created.body.name).to.equal('Ada \u{1F600}');
    expect(JSON.stringify(created.body.customData)).to.equal(deep(30));
  });
});
