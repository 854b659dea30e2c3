import { currentSession, dropSession } from './auth.ts';

type Detail = { in?: string; path?: string; message?: string };

/** An error answer of the management API: `{code, message, data?, details?}`. */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly data?: unknown;
  readonly details?: Detail[];

  constructor(status: number, code: string, message: string, data?: unknown, details?: Detail[]) {
    super(message);
    this.status = status;
    this.code = code;
    this.data = data;
    this.details = details;
  }

  /**
   * The form field this error is about, when it can be told: a validation detail's path, or a
   * field named in the error code (`user.username_already_in_use`, `password.rejected`).
   */
  get field(): string | undefined {
    const path = this.details?.find((detail) => detail.in === 'body')?.path;
    if (path) {
      return path.split('.')[0];
    }
    const [domain = '', reason = ''] = this.code.split('.');
    const named = codeFields.find(([pattern]) => pattern.test(`${domain}.${reason}`));
    return named?.[1];
  }

  /** The message with what the details add (which field, which password rules). */
  get text(): string {
    const issues = (this.data as { issues?: Array<{ code: string }> } | undefined)?.issues;
    if (issues?.length) {
      return `${this.message} ${issues.map((issue) => issue.code.replace(/^password_rejected\./, '').replaceAll('_', ' ')).join('; ')}.`;
    }
    const detail = this.details?.[0];
    return detail?.message ? `${this.message} ${detail.path ? `${detail.path}: ` : ''}${detail.message}` : this.message;
  }
}

const codeFields: Array<[RegExp, string]> = [
  [/^password\./, 'password'],
  [/setup_token/, 'setupToken'],
  [/username/, 'username'],
  [/email/, 'primaryEmail'],
  [/phone/, 'primaryPhone'],
  [/indicator|resource_identifier/, 'indicator'],
  [/url/, 'url'],
  [/name_in_use|name_exists|\.name_/, 'name'],
];

export const toApiError = (error: unknown): ApiError =>
  error instanceof ApiError
    ? error
    : new ApiError(0, 'network', error instanceof Error ? error.message : String(error));

/** Called when the token is refused (expired, revoked): the app shows its sign-in screen. */
let onUnauthorized = () => {};
export const whenUnauthorized = (handler: () => void) => {
  onUnauthorized = handler;
};

/** A call to the management API with the administrator's token; JSON in, JSON out. */
export async function api<T = unknown>(method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetchApi(method, path, body);
  return (response.status === 204 ? undefined : await response.json()) as T;
}

/** Also returns `Total-Number` (the size of the whole list) for paged lists. */
// eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- the caller names the JSON shape it reads, as with api<T>; the service's schemas check what it answers
export async function apiPage<T>(path: string): Promise<{ items: T[]; total: number }> {
  const response = await fetchApi('GET', path);
  return { items: (await response.json()) as T[], total: Number(response.headers.get('total-number') ?? 0) };
}

async function fetchApi(method: string, path: string, body?: unknown): Promise<Response> {
  const session = currentSession();
  const headers: Record<string, string> = session ? { authorization: `Bearer ${session.accessToken}` } : {};
  if (body !== undefined) {
    headers['content-type'] = 'application/json';
  }
  const response = await fetch(`/api/${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (response.ok) {
    return response;
  }
  const error = (await response.json().catch(() => ({}))) as {
    code?: string;
    message?: string;
    data?: unknown;
    details?: Detail[];
  };
  if (response.status === 401) {
    dropSession();
    onUnauthorized();
  }
  throw new ApiError(
    response.status,
    error.code ?? `http.${response.status}`,
    error.message ?? response.statusText,
    error.data,
    error.details,
  );
}
