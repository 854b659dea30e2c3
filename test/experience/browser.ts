import { createHash, randomBytes } from 'node:crypto';
import { type Got, got } from 'got';
import { CookieJar } from 'tough-cookie';

import type { HttpResponse, ServiceClient } from '../support/service.ts';

/**
 * A browser, as far as the OIDC flow needs one: a cookie jar, no automatic redirects. It starts
 * /oidc/auth for an application, drives the Experience API, and follows the redirects back.
 */
export class Browser {
  readonly jar = new CookieJar();
  readonly client: Got;

  readonly service: ServiceClient;

  constructor(service: ServiceClient) {
    this.service = service;
    this.client = got.extend({
      prefixUrl: service.url,
      cookieJar: this.jar,
      followRedirect: false,
      throwHttpErrors: false,
      retry: { limit: 0 },
      responseType: 'json',
    });
  }

  async call(method: 'get' | 'post' | 'put' | 'patch' | 'delete', path: string, json?: unknown): Promise<HttpResponse> {
    const response = await this.client(path, { method, ...(json !== undefined && { json }) });
    return response;
  }

  /** GET /oidc/auth with PKCE; returns the verifier and where the provider sent the browser. */
  async authorize(
    clientId: string,
    redirectUri: string,
    extra: Record<string, string> = {},
  ): Promise<{ verifier: string; location: string; state: string }> {
    const verifier = randomBytes(32).toString('base64url');
    const state = randomBytes(8).toString('hex');
    const query = new URLSearchParams({
      client_id: clientId,
      redirect_uri: redirectUri,
      response_type: 'code',
      scope: 'openid profile',
      state,
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
      ...extra,
    });
    const response = await this.client.get(`oidc/auth?${query}`, { responseType: 'text' });
    return { verifier, state, location: String(response.headers.location) };
  }

  /** Follows redirects from `url` until one leaves the service (or reaches the page `stopAt`); returns that location. */
  async followToApplication(url: string, stopAt?: string): Promise<URL> {
    let next = new URL(url, this.service.url);
    for (let hops = 0; hops < 10; hops++) {
      if (
        (next.origin !== new URL(this.service.url).origin && !next.href.startsWith(this.service.config.endpoint)) ||
        next.pathname === stopAt
      ) {
        return next;
      }
      const path = next.href
        .replace(this.service.config.endpoint, this.service.url)
        .replace(`${this.service.url}/`, '');
      const response = await this.client.get(path, { responseType: 'text' });
      const location = response.headers.location;
      if (!location) {
        throw new Error(`no redirect from ${next.href}: ${response.statusCode} ${response.body.slice(0, 300)}`);
      }
      next = new URL(location, next);
    }
    throw new Error('too many redirects');
  }
}
