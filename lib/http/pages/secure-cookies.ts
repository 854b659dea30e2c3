import type Koa from 'koa';

/**
 * With an https ENDPOINT the service is public over TLS only, also when a proxy in front of it
 * terminates TLS and TRUST_PROXY is off: its requests count as https. Koa and oidc-provider mark
 * cookies `Secure` on https requests, so every cookie the service sets is `Secure` then.
 */
export function countRequestsAsHttps(app: Koa, endpoint: string): void {
  if (new URL(endpoint).protocol === 'https:') {
    Object.defineProperty(app.request, 'protocol', { configurable: true, get: () => 'https' });
  }
}
