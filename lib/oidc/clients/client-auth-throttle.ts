import type { Knex } from 'knex';
import type Koa from 'koa';
import { errors, type KoaContextWithOIDC, Provider } from 'oidc-provider';

import type { Config } from '../../config/env.ts';
import { addressKey, clearFailures, FailureThrottle, retryAfterSeconds } from '../../http/failure-throttle.ts';
import type { SharedCache } from '../../storage/shared-cache.ts';

type Settings = Config['clientAuthThrottle'];

/** The provider's routes where a client authenticates (their errors are `attach`'s events). */
const clientAuthRoutes = new Set(['token', 'revocation', 'introspection', 'pushed_authorization_request']);

/** Every source's key for one client id (the admin unlock clears them all). */
const clientPrefix = (clientId: string) => `client:${clientId}|`;

/** Longer ids name no application (those are at most 64 characters): not worth a row each. */
const maxCountedClientId = 128;

/** The OAuth error of a refused guess (Auth0's code for the same refusal). */
const tooManyAttempts = {
  error: 'too_many_attempts',
  error_description: 'Too many failed client authentications from this address; try again later.',
};

/**
 * Slows brute force where clients authenticate (token, revocation, introspection, pushed
 * authorization requests), without ever refusing a right secret: the provider checks the secret
 * first, and only a failed authentication is counted (failure-throttle.ts), against the client id at
 * that source address and against the source address alone. Once either key reached its limit, that
 * source's further failures are answered 429 instead of 401 for the rest of the window, while the
 * client's right secret, from there or anywhere, is answered as ever. Public clients' ids are not
 * counted: they have no secret to guess. A successful request costs no query.
 */
export class ClientAuthThrottle {
  /** The client id each request tried to authenticate as (its first client lookup). */
  readonly #attempts = new WeakMap<object, string>();
  /** Requests whose client authentication failed, with the keys their failure counts against. */
  readonly #failures = new WeakMap<object, Map<string, number>>();
  readonly #throttle: FailureThrottle;

  private readonly settings: Settings;

  constructor(db: Knex, cache: SharedCache, settings: Settings) {
    this.settings = settings;
    this.#throttle = new FailureThrottle(db, cache, settings.windowSeconds);
  }

  /**
   * Wraps the provider's client lookup to note, on a route where clients authenticate, the client id
   * the request authenticates as: its first lookup.
   */
  observe<T>(find: (id: string) => Promise<T>): (id: string) => Promise<T> {
    return (id) => {
      const ctx = Provider.ctx;
      if (ctx && clientAuthRoutes.has(ctx.oidc.route) && !this.#attempts.has(ctx)) {
        this.#attempts.set(ctx, id);
      }
      return find(id);
    };
  }

  /**
   * Counts the provider's failed client authentications once their 401 is rendered, and answers a
   * refused source's failure 429 instead.
   */
  attach(provider: Provider): void {
    const onError = (ctx: KoaContextWithOIDC, error: errors.OIDCProviderError) => {
      const clientId = this.#attempts.get(ctx);
      if (clientId === undefined || !(error instanceof errors.InvalidClientAuth)) {
        return;
      }
      const address = addressKey(ctx.ip);
      const limits = new Map([[address, this.settings.failuresPerAddress]]);
      // A public client has no secret to guess. Ids of confidential clients, and ids of no client, are counted
      // (but for one holding U+0000, which names no application and which PostgreSQL cannot store: its address counts).
      if (
        ctx.oidc.client?.clientAuthMethod !== 'none' &&
        clientId.length <= maxCountedClientId &&
        !clientId.includes('\u0000')
      ) {
        limits.set(`${clientPrefix(clientId)}${address}`, this.settings.failuresPerClient);
      }
      this.#failures.set(ctx, limits);
    };
    provider.on('grant.error', onError);
    provider.on('revocation.error', onError);
    provider.on('introspection.error', onError);
    provider.on('pushed_authorization_request.error', onError);
    provider.use((ctx: Koa.Context, next: Koa.Next) =>
      next().then(() => {
        const limits = this.#failures.get(ctx);
        return limits ? this.#throttle.fail(limits).then((until) => until && refuse(ctx, until)) : undefined;
      }),
    );
  }
}

/** Turns the rendered 401 `invalid_client` into the 429 of a refused source (RFC 6749 §5.2's shape). */
function refuse(ctx: Koa.Context, until: number): void {
  ctx.status = 429;
  ctx.body = tooManyAttempts;
  ctx.remove('WWW-Authenticate');
  ctx.set('Retry-After', retryAfterSeconds(until));
  ctx.set('Cache-Control', 'no-store');
}

/** Admin unlock: client ids refused after failed authentications are answered 401 again at once. */
export async function clearClientThrottles(db: Knex, clientIds: string[]): Promise<void> {
  await clearFailures(db, clientIds.map(clientPrefix));
}
