import type { HttpResponse, TestService } from './service.ts';

export type AccountCall = (
  method: 'get' | 'post' | 'put' | 'patch' | 'delete',
  path: string,
  json?: unknown,
  proof?: string,
) => Promise<HttpResponse>;

/** Logto's Account API as the signed-in user calls it: their token, and a `logto-verification-id` proof where given. */
export const accountApi =
  (service: TestService, token: string): AccountCall =>
  (method, path, json, proof) =>
    service.http[method](`api/${path}`, {
      headers: { authorization: `Bearer ${token}`, ...(proof && { 'logto-verification-id': proof }) },
      ...(json !== undefined && { json }),
    });
