import { z } from 'zod';

import type { RouteSpec } from './route.ts';

type AnySpec = RouteSpec<z.ZodType | undefined, z.ZodType | undefined, z.ZodType | undefined, z.ZodType | undefined>;

const jsonSchema = (schema: z.ZodType, io: 'input' | 'output') =>
  z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'openapi-3.0' });

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

/** The OpenAPI 3 document of every route registered on the given specs: it is built from the validating schemas. */
export function buildOpenApiDocument(specs: AnySpec[], info: { title: string; version: string; serverUrl: string }) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const spec of specs) {
    const path = `/api${spec.path.replace(/:(\w+)/g, '{$1}')}`;
    const success = spec.status ?? (spec.response ? 200 : 204);
    const responses: Record<string, unknown> = {
      [success]: spec.response
        ? { description: 'OK', content: { 'application/json': { schema: jsonSchema(spec.response, 'output') } } }
        : { description: 'OK' },
    };
    for (const status of [400, 401, 403, ...(spec.errors ?? [])]) {
      responses[status] = errorResponse;
    }
    paths[path] ??= {};
    paths[path][spec.method] = {
      tags: [spec.tag],
      summary: spec.summary,
      parameters: [...parameters(spec.params, 'path'), ...parameters(spec.query, 'query')],
      ...(spec.body && {
        requestBody: { required: true, content: { 'application/json': { schema: jsonSchema(spec.body, 'input') } } },
      }),
      responses,
    };
  }
  return {
    openapi: '3.0.3',
    info: { title: info.title, version: info.version },
    servers: [{ url: info.serverUrl }],
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
    },
    security: [{ bearer: [] }],
    paths,
  };
}
