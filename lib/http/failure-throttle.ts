import ipaddr from 'ipaddr.js';
import type { Knex } from 'knex';

import type { Queryable } from '../storage/database.ts';
import { bumpCacheVersion, type SharedCache } from '../storage/shared-cache.ts';
import { withTransaction } from '../storage/transaction.ts';
import {
  countAuthFailure,
  deleteAuthFailuresStartingWith,
  deleteEndedAuthFailures,
  loadBlockedTargets,
  updateAuthFailure,
} from './auth-failure-queries.ts';

/**
 * One host's addresses count as one: an IPv6 client gets a whole /64, an IPv4-mapped one is IPv4.
 * What is not an address (a proxy header gone wrong) shares one key.
 */
export function addressKey(ip: string): string {
  if (!ipaddr.isValid(ip)) {
    return 'address:unknown';
  }
  const address = ipaddr.process(ip);
  return address.kind() === 'ipv4'
    ? `address:${address.toString()}`
    : `address:${address.toNormalizedString().split(':').slice(0, 4).join(':')}::/64`;
}

/** `Retry-After` for a refusal that ends at `until` (ms): whole seconds, at least one. */
export function retryAfterSeconds(until: number): string {
  return String(Math.max(1, Math.ceil((until - Date.now()) / 1000)));
}

/**
 * Failed credentials (a client secret, a management API token) counted per key (a source address, a
 * client id at a source address) over a fixed window, in the database so that every instance counts
 * together. It is only ever asked about a credential that already failed: a right credential is
 * never counted and never refused, so no one can lock its holder out by failing on its behalf. A key
 * that reached its limit has its next failures answered 429 for the rest of the window, which refuses
 * the guessing source, never the credential's holder.
 *
 * When a key crosses its limit the `throttles` cache version moves and each instance reloads the few
 * refused keys: a flood of failures from a refused source costs a lookup in memory each, no write.
 *
 * A success does not reset a count: an attacker's failures would be forgiven by the real client's
 * successes.
 */
export class FailureThrottle {
  private readonly db: Knex;
  private readonly cache: SharedCache;
  private readonly windowSeconds: number;

  constructor(db: Knex, cache: SharedCache, windowSeconds: number) {
    this.db = db;
    this.cache = cache;
    this.windowSeconds = windowSeconds;
  }

  /**
   * Counts one failure against each key (with its limit). The time the refusal ends when some key
   * was refused already (the failure is then answered 429); undefined for a failure within the
   * limits, the one that reaches a limit included.
   */
  async fail(limits: Map<string, number>): Promise<number | undefined> {
    const blocked = await this.cache.get('throttles', 'blocked', () => loadBlockedTargets(this.db, Date.now()));
    const until = Math.max(0, ...[...limits.keys()].map((key) => blocked.get(key) ?? 0));
    if (until > Date.now()) {
      return until;
    }
    return this.#record(limits);
  }

  /** One transaction; the refusal a concurrent failure (here or on another instance) set first wins. */
  async #record(limits: Map<string, number>): Promise<number | undefined> {
    const windowMs = this.windowSeconds * 1000;
    return withTransaction(this.db, async (trx) => {
      const now = Date.now();
      let crossed = false;
      let refusedUntil = 0;
      // In one order everywhere, so that two failures never wait on each other's rows (MySQL).
      for (const [target, limit] of [...limits].sort(([a], [b]) => (a < b ? -1 : 1))) {
        const row = await countAuthFailure(trx, target, now);
        if (row.blocked_until !== null && Number(row.blocked_until) > now) {
          refusedUntil = Math.max(refusedUntil, Number(row.blocked_until));
          continue;
        }
        const expired = Number(row.window_started_at) + windowMs <= now;
        const failures = expired ? 1 : row.failures;
        const blocks = failures >= limit;
        if (expired || blocks) {
          await updateAuthFailure(trx, {
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
      return refusedUntil > now ? refusedUntil : undefined;
    });
  }
}

/** Admin unlock: forgets the counts of the keys starting with these prefixes, and their refusals. */
export async function clearFailures(db: Knex, prefixes: string[]): Promise<void> {
  await withTransaction(db, async (trx) => {
    await deleteAuthFailuresStartingWith(trx, prefixes);
    await bumpCacheVersion(trx, 'throttles');
  });
}

/** Housekeeping: forgets windows that ended and refusals that are over. */
export async function purgeFailures(db: Queryable, windowSeconds: number): Promise<void> {
  const now = Date.now();
  await deleteEndedAuthFailures(db, now - windowSeconds * 1000, now);
}
