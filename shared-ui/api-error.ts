/** A validation detail of a refused request: where (`body`, `query`), which field (`a.b`), what is wrong. */
export type ErrorDetail = { in?: string; path?: string; message?: string };

/** An object's fields, or none: for reading what an error answer carries. */
export const fieldsOf = (value: unknown): Record<string, unknown> =>
  typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};

const text = (value: unknown) => (typeof value === 'string' ? value : undefined);

/**
 * An answer of the service's APIs other than 2xx (`{code, message, data?, details?}`), or one the
 * front end makes itself (status 0 when the server was not reached).
 */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly data: Record<string, unknown>;
  readonly details: ErrorDetail[];

  constructor(
    status: number,
    code: string,
    message: string,
    data: Record<string, unknown> = {},
    details: ErrorDetail[] = [],
  ) {
    super(message);
    this.status = status;
    this.code = code;
    this.data = data;
    this.details = details;
  }

  /**
   * Reads an error answer's body, whatever it holds; `fallback` stands for a missing code or
   * message (the console names the HTTP status, the sign-in pages say their own words instead).
   */
  static fromAnswer(status: number, body: unknown, fallback: { code?: string; message?: string } = {}): ApiError {
    const { code, message, data, details } = fieldsOf(body);
    return new ApiError(
      status,
      text(code) ?? fallback.code ?? '',
      text(message) ?? fallback.message ?? '',
      fieldsOf(data),
      Array.isArray(details) ? details.map((detail) => fieldsOf(detail) as ErrorDetail) : [],
    );
  }

  /**
   * The request field this error is about, when it can be told: a body validation detail's path
   * (its first segment), or a field named in the error code (`user.username_already_in_use`,
   * `password.rejected`). Each front end maps it to its own input.
   */
  get field(): string | undefined {
    const path = this.details.find((detail) => detail.in === 'body')?.path;
    if (path) {
      return path.split('.')[0];
    }
    const [domain = '', reason = ''] = this.code.split('.');
    return codeFields.find(([pattern]) => pattern.test(`${domain}.${reason}`))?.[1];
  }
}

/** Error codes that name a field, first match wins. */
const codeFields: Array<[RegExp, string]> = [
  [/^password\./, 'password'],
  [/invalid_credentials/, 'password'],
  [/setup_token/, 'setupToken'],
  [/username/, 'username'],
  [/email/, 'primaryEmail'],
  [/phone/, 'primaryPhone'],
  [/indicator|resource_identifier/, 'indicator'],
  [/url/, 'url'],
  [/name_in_use|name_exists|\.name_/, 'name'],
];
