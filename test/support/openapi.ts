import type { TestService } from './service.ts';

/** The parts of the service's OpenAPI document (GET /api/swagger.json) that the input tests read. */
export type Schema = {
  type?: string;
  format?: string;
  pattern?: string;
  enum?: unknown[];
  const?: unknown;
  examples?: unknown[];
  nullable?: boolean;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  maxProperties?: number;
  minimum?: number;
  maximum?: number;
  'x-max-bytes'?: number;
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
};
export type Parameter = { name: string; in: 'path' | 'query'; required?: boolean; schema: Schema };
export type Operation = {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /** In OpenAPI notation, `/api/users/{userId}`. */
  path: string;
  parameters: Parameter[];
  body?: Schema;
};

export async function apiOperations(service: TestService): Promise<Operation[]> {
  const response = await service.http.get('api/swagger.json');
  const document = response.body as {
    paths: Record<
      string,
      Record<string, { parameters?: Parameter[]; requestBody?: { content: Record<string, { schema: Schema }> } }>
    >;
  };
  return Object.entries(document.paths).flatMap(([path, operations]) =>
    Object.entries(operations).map(([method, operation]) => ({
      method: method as Operation['method'],
      path,
      parameters: operation.parameters ?? [],
      body: operation.requestBody?.content['application/json']?.schema,
    })),
  );
}

/** The alternatives of a schema (a union, or one schema). */
export const alternatives = (schema: Schema): Schema[] => schema.anyOf ?? schema.oneOf ?? schema.allOf ?? [schema];

/** A value the schema likely accepts, for the parts of a request that are not under test. */
export function sample(schema: Schema): unknown {
  const [first] = alternatives(schema);
  if (first !== schema) {
    return sample(first);
  }
  if (schema.const !== undefined) {
    return schema.const;
  }
  if (schema.examples?.length) {
    return schema.examples[0];
  }
  if (schema.enum) {
    return schema.enum[0];
  }
  switch (schema.type) {
    case 'integer':
    case 'number':
      return schema.minimum ?? 1;
    case 'boolean':
      return true;
    case 'array':
      return [];
    case 'object':
      return {};
    default:
      return schema.format === 'email'
        ? 'a@example.com'
        : schema.format === 'uri'
          ? 'https://app.example.invalid/'
          : 'x'.repeat(Math.max(1, schema.minLength ?? 1));
  }
}

/** The operation's URL (without `/api/`), its path parameters filled with `values` or samples. */
export function operationUrl(operation: Operation, values: Record<string, string> = {}): string {
  const filled = operation.path.replace(/\{(\w+)\}/g, (_match, name: string) => {
    const parameter = operation.parameters.find((candidate) => candidate.in === 'path' && candidate.name === name);
    return encodeURIComponent(values[name] ?? String(parameter ? sample(parameter.schema) : 'x'));
  });
  return filled.replace(/^\/api\//, '');
}

/** Samples of the operation's required query parameters. */
export function requiredQuery(operation: Operation): Record<string, string> {
  return Object.fromEntries(
    operation.parameters
      .filter((parameter) => parameter.in === 'query' && parameter.required)
      .map((parameter) => [parameter.name, String(sample(parameter.schema))]),
  );
}
