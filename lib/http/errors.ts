/**
 * The one error type of the management and experience APIs. `code` is a stable Logto-style string
 * (`entity.not_exists_with_id`); `expose` says whether `message` may reach the client.
 */
export class RequestError extends Error {
  readonly code: string;
  readonly status: number;
  readonly expose: boolean;
  readonly data?: unknown;
  readonly details?: unknown;

  constructor(
    { code, status = 400, expose = true }: { code: string; status?: number; expose?: boolean },
    message: string,
    extra: { data?: unknown; details?: unknown } = {},
  ) {
    super(message);
    this.name = 'RequestError';
    this.code = code;
    this.status = status;
    this.expose = expose;
    this.data = extra.data;
    this.details = extra.details;
  }
}

export const notFound = (entity: string, id: string) =>
  new RequestError({ code: 'entity.not_exists_with_id', status: 404 }, `The ${entity} with ID \`${id}\` does not exist.`, {
    data: { name: entity, id },
  });

/** `value`, or a 404 naming what was not found. */
export function orNotFound<T>(value: T | undefined, entity: string, id: string): T {
  if (value === undefined) {
    throw notFound(entity, id);
  }
  return value;
}

export const alreadyExists = (code: string, message: string) => new RequestError({ code, status: 422 }, message);
