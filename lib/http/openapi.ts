import { z } from 'zod';

import { operationId } from './operation-ids.ts';
import type { AnySpec } from './route.ts';
import { apiTags } from './tags.ts';

/**
 * OpenAPI 3.0.3 reads `nullable: true` beside an `enum` as "the enum decides": null is allowed only
 * when the enum lists it. zod writes `nullable` alone, so a nullable enum (a hook's `event`) would
 * refuse the null it answers with; list null in the enum too.
 */
function nullInNullableEnums(node: unknown): void {
  if (Array.isArray(node)) {
    node.forEach(nullInNullableEnums);
  } else if (typeof node === 'object' && node !== null) {
    const schema = node as { nullable?: unknown; enum?: unknown[] };
    if (schema.nullable === true && schema.enum && !schema.enum.includes(null)) {
      schema.enum = [...schema.enum, null];
    }
    Object.values(node).forEach(nullInNullableEnums);
  }
}

function jsonSchema(schema: z.ZodType, io: 'input' | 'output') {
  const json = z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'openapi-3.0' });
  nullInNullableEnums(json);
  return json;
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
    openapi: '3.0.3',
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
  };
}
