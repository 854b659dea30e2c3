import { z } from 'zod';

import { operationId } from './operation-ids.ts';
import type { AnySpec } from './route.ts';
import { apiTags } from './tags.ts';

/**
 * zod writes a nullable scalar as `type: [X, "null"]` and anything else nullable as
 * `anyOf: [X, {type: "null"}]`; one form for both (the second), so that a reader of the document
 * finds every alternative, null included, in one place.
 */
function nullAsAlternative(node: unknown): unknown {
  if (Array.isArray(node)) {
    return node.map(nullAsAlternative);
  }
  if (typeof node !== 'object' || node === null) {
    return node;
  }
  const { type, ...rest } = Object.fromEntries(
    Object.entries(node).map(([key, value]) => [key, nullAsAlternative(value)]),
  ) as Record<string, unknown>;
  if (Array.isArray(type) && type.length === 2 && type.includes('null')) {
    return { anyOf: [{ ...rest, type: type.find((name) => name !== 'null') as unknown }, { type: 'null' }] };
  }
  return type === undefined ? rest : { type, ...rest };
}

/** A JSON Schema (2020-12, OpenAPI 3.1's dialect) of `schema`, as a schema object inside the document. */
export function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const json = nullAsAlternative(z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' }));
  // The document says its dialect once (OpenAPI 3.1's), not in every schema.
  return Object.fromEntries(Object.entries(json as object).filter(([key]) => key !== '$schema'));
}

function parameters(schema: z.ZodType | undefined, location: 'path' | 'query') {
  if (!schema) {
    return [];
  }
  const { properties = {}, required = [] } = jsonSchema(schema, 'input') as {
    properties?: Record<string, unknown>;
    required?: string[];
  };
  return Object.entries(properties).map(([name, property]) => ({
    name,
    in: location,
    required: location === 'path' || required.includes(name),
    schema: property,
  }));
}

const errorResponse = {
  description: 'Error',
  content: {
    'application/json': {
      schema: {
        type: 'object',
        required: ['code', 'message'],
        properties: { code: { type: 'string' }, message: { type: 'string' }, data: {}, details: {} },
      },
    },
  },
};

/** What a 200 or 201 without a response schema sends: `{}` (route.ts). */
const emptyObject = { type: 'object', additionalProperties: false };

function successResponse(spec: AnySpec, status: number) {
  if (status === 204) {
    return { description: 'No content' };
  }
  const schema = spec.response ? jsonSchema(spec.response, 'output') : emptyObject;
  return { description: status === 201 ? 'Created' : 'OK', content: { 'application/json': { schema } } };
}

/**
 * The OpenAPI 3 document of every route registered on the given specs: it is built from the validating
 * schemas. `open` routes need no token; the others name the bearer token (an experience route's cookie
 * is not an OpenAPI security scheme a client fills in).
 */
export function buildOpenApiDocument(
  groups: { open: AnySpec[]; authenticated: AnySpec[] },
  info: { title: string; version: string; serverUrl: string },
  /** OpenAPI 3.1's `webhooks`: the requests the service sends, by name. */
  webhooks: Record<string, unknown> = {},
) {
  const paths: Record<string, Record<string, unknown>> = {};
  const ids = new Map<string, string>();
  const specs = [
    ...groups.open.map((spec) => ({ spec, open: true })),
    ...groups.authenticated.map((spec) => ({ spec, open: false })),
  ];
  for (const { spec, open } of specs) {
    const path = `/api${spec.path.replace(/:(\w+)/g, '{$1}')}`;
    const id = operationId(spec.method, spec.path);
    const clash = ids.get(id);
    if (clash) {
      throw new Error(`${spec.method} ${spec.path} and ${clash} have the same operation id ${id}`);
    }
    ids.set(id, `${spec.method} ${spec.path}`);
    const success = spec.status ?? (spec.response ? 200 : 204);
    const responses: Record<string, unknown> = { [success]: successResponse(spec, success) };
    for (const status of [400, ...(open ? [] : [401, 403]), ...(spec.errors ?? [])]) {
      responses[status] = errorResponse;
    }
    paths[path] ??= {};
    paths[path][spec.method] = {
      operationId: id,
      tags: [spec.tag],
      summary: spec.summary,
      parameters: [...parameters(spec.params, 'path'), ...parameters(spec.query, 'query')],
      ...(spec.body && {
        requestBody: { required: true, content: { 'application/json': { schema: jsonSchema(spec.body, 'input') } } },
      }),
      responses,
      ...(open && { security: [] }),
    };
  }
  const used = new Set<string>(specs.map(({ spec }) => spec.tag));
  return {
    openapi: '3.1.0',
    info: { title: info.title, version: info.version },
    servers: [{ url: info.serverUrl }],
    tags: Object.entries(apiTags)
      .filter(([name]) => used.has(name))
      .map(([name, description]) => ({ name, description })),
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
    },
    security: [{ bearer: [] }],
    paths,
    webhooks,
  };
}
