import ipaddr from 'ipaddr.js';
import type { Knex } from 'knex';
import type Koa from 'koa';
import { errors, Provider, type KoaContextWithOIDC } from 'oidc-provider';

import type { Config } from '../config/env.ts';
import type { Queryable } from '../storage/database.ts';
import { bumpCacheVersion, type SharedCache } from '../storage/shared-cache.ts';
import { withTransaction } from '../storage/transaction.ts';
import {
  countClientAuthFailure,
  deleteClientAuthFailures,
  deleteEndedClientAuthFailures,
  loadBlockedTargets,
  updateClientAuthFailure,
} from './client-auth-failure-queries.ts';

type Settings = Config['clientAuthThrottle'];

/** The provider's routes where a client authenticates (their errors are `attach`'s events). */
const clientAuthRoutes = new Set(['token', 'revocation', 'introspection', 'pushed_authorization_request']);

const clientKey = (clientId: string) => `client:${clientId}`;

/** Longer ids name no application (those are at most 64 characters): not worth a row each. */
const maxCountedClientId = 128;

/**
 * One host's addresses count as one: an IPv6 client gets a whole /64, an IPv4-mapped one is IPv4.
 * What is not an address (a proxy header gone wrong) shares one key.
 */
function addressKey(ip: string): string {
  if (!ipaddr.isValid(ip)) {
    return 'address:unknown';
  }
  const address = ipaddr.process(ip);
  return address.kind() === 'ipv4'
    ? `address:${address.toString()}`
    : `address:${address.toNormalizedString().split(':').slice(0, 4).join(':')}::/64`;
}

/** What an OAuth client sees while its id or address is refused (Auth0's code for the same refusal). */
class TooManyAttempts extends errors.OIDCProviderError {
  constructor() {
    super(429, 'too_many_attempts');
    this.error_description = 'Too many failed client authentications; try again later.';
  }
}

/**
 * Slows brute force where clients authenticate (token, revocation, introspection, pushed
 * authorization requests). Failed client authentications are counted in the database per client id
 * and per source address over a fixed window, so every instance counts together; a key that reaches
 * its limit is refused with 429, the right secret too (else a guess would still be told apart),
 * for one window. Failures are rare and written as they happen; when a key crosses its limit the
 * `throttles` cache version moves, and each instance reloads the few refused keys. The check on
 * every request is a lookup in memory: a successful request costs no query.
 *
 * A success does not reset the count: an attacker's failures would be forgiven by the real client's
 * successes.
 */
export class ClientAuthThrottle {
  /** The client id each request tried to authenticate as (its first client lookup). */
  readonly #attempts = new WeakMap<object, string>();
  /** Requests whose client authentication failed, with the keys their failure counts against. */
  readonly #failures = new WeakMap<object, Map<string, number>>();

  constructor(
    private readonly db: Knex,
    private readonly cache: SharedCache,
    private readonly settings: Settings,
  ) {}

  /**
   * Wraps the provider's client lookup. On a route where clients authenticate, the request's first
   * lookup is its client authentication: a refused client id or address is answered 429 there.
   */
  guard<T>(find: (id: string) => Promise<T>): (id: string) => Promise<T> {
    // Promise chains, not async functions: this runs on every token request, where each async
    // layer costs promises that the provider's AsyncLocalStorage makes dear.
    return (id) => {
      const ctx = Provider.ctx;
      if (!ctx || !clientAuthRoutes.has(ctx.oidc.route) || this.#attempts.has(ctx)) {
        return find(id);
      }
      this.#attempts.set(ctx, id);
      return this.#blockedUntil(id, ctx).then((until) => {
        if (until) {
          ctx.set('Retry-After', String(Math.max(1, Math.ceil((until - Date.now()) / 1000))));
          ctx.set('Cache-Control', 'no-store');
          throw new TooManyAttempts();
        }
        return find(id);
      });
    };
  }

  /** Counts the provider's failed client authentications, before their answer goes out. */
  attach(provider: Provider): void {
    const onError = (ctx: KoaContextWithOIDC, error: errors.OIDCProviderError) => {
      const clientId = this.#attempts.get(ctx);
      if (clientId === undefined || !(error instanceof errors.InvalidClientAuth)) {
        return;
      }
      const limits = new Map([[addressKey(ctx.ip), this.settings.failuresPerAddress]]);
      // A public client has no secret to guess: refusing its id would only let anyone shut its
      // users out. Ids of confidential clients, and ids of no client, are counted.
      if (ctx.oidc.client?.clientAuthMethod !== 'none' && clientId.length <= maxCountedClientId) {
        limits.set(clientKey(clientId), this.settings.failuresPerClient);
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
        return limits ? this.#recordFailure(limits) : undefined;
      }),
    );
  }

  /** The request's address is read only when some key is refused (rarely). */
  #blockedUntil(clientId: string, ctx: { ip: string }): Promise<number | undefined> {
    return this.cache
      .get('throttles', 'blocked', () => loadBlockedTargets(this.db, Date.now()))
      .then((blocked) => {
        if (blocked.size === 0) {
          return undefined;
        }
        const until = Math.max(blocked.get(clientKey(clientId)) ?? 0, blocked.get(addressKey(ctx.ip)) ?? 0);
        return until > Date.now() ? until : undefined;
      });
  }

  /** Counts one failure against each key (with its limit), in one transaction. */
  async #recordFailure(limits: Map<string, number>): Promise<void> {
    const windowMs = this.settings.windowSeconds * 1000;
    await withTransaction(this.db, async (trx) => {
      const now = Date.now();
      let crossed = false;
      // In one order everywhere, so that two failures never wait on each other's rows (MySQL).
      for (const [target, limit] of [...limits].sort(([a], [b]) => (a < b ? -1 : 1))) {
        const row = await countClientAuthFailure(trx, target, now);
        if (row.blocked_until !== null && Number(row.blocked_until) > now) {
          // Refused already: this failure raced the refusal (another instance's, or a concurrent one).
          continue;
        }
        const expired = Number(row.window_started_at) + windowMs <= now;
        const failures = expired ? 1 : row.failures;
        const blocks = failures >= limit;
        if (expired || blocks) {
          await updateClientAuthFailure(trx, {
            target,
            failures,
            window_started_at: expired ? now : row.window_started_at,
            blocked_until: blocks ? now + windowMs : null,
          });
        }
        crossed ||= blocks;
      }
      if (crossed) {
        await bumpCacheVersion(trx, 'throttles');
      }
    });
  }
}

/** Admin unlock: client ids refused after failed authentications may authenticate again at once. */
export async function clearClientThrottles(db: Knex, clientIds: string[]): Promise<void> {
  await withTransaction(db, async (trx) => {
    await deleteClientAuthFailures(trx, clientIds.map(clientKey));
    await bumpCacheVersion(trx, 'throttles');
  });
}

/** Housekeeping: forgets windows that ended and refusals that are over. */
export async function purgeClientAuthFailures(db: Queryable, settings: Settings): Promise<void> {
  const now = Date.now();
  await deleteEndedClientAuthFailures(db, now - settings.windowSeconds * 1000, now);
}
