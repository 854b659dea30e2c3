import { ApiError } from '../../shared-ui/api-error.ts';
import { currentSession, dropSession } from './auth.ts';

export { ApiError };

/** The error's message with what its details add (which field, which password rules). */
export function errorText(error: ApiError): string {
  const issues = (error.data as { issues?: Array<{ code: string }> }).issues;
  if (issues?.length) {
    return `${error.message} ${issues.map((issue) => issue.code.replace(/^password_rejected\./, '').replaceAll('_', ' ')).join('; ')}.`;
  }
  const detail = error.details.at(0);
  return detail?.message ? `${error.message} ${detail.path ? `${detail.path}: ` : ''}${detail.message}` : error.message;
}

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
  const answer: unknown = await response.json().catch(() => ({}));
  if (response.status === 401) {
    dropSession();
    onUnauthorized();
  }
  throw ApiError.fromAnswer(response.status, answer, {
    code: `http.${response.status}`,
    message: response.statusText,
  });
}
