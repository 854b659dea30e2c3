import type { Knex } from 'knex';

import type { Queryable } from '../storage/database.ts';

/*
 * `client_auth_failures`: failed credentials counted per key (`address:<ip>`, `client:<id>|address:<ip>`,
 * `management:address:<ip>`; failure-throttle.ts).
 */

export type AuthFailureRow = {
  target: string;
  failures: number;
  window_started_at: number | string;
  blocked_until: number | string | null;
};

/**
 * Counts one failure against the key and reads its row back. One upsert takes the row's write lock
 * at once: concurrent failures count one after the other.
 */
export async function countAuthFailure(trx: Knex.Transaction, target: string, now: number): Promise<AuthFailureRow> {
  await trx('client_auth_failures')
    .insert({ target, failures: 1, window_started_at: now, blocked_until: null })
    .onConflict('target')
    .merge({ failures: trx.raw('?? + 1', ['client_auth_failures.failures']) });
  return trx('client_auth_failures').where({ target }).first<AuthFailureRow>();
}

export async function updateAuthFailure(trx: Knex.Transaction, row: AuthFailureRow): Promise<void> {
  const { target, ...columns } = row;
  await trx('client_auth_failures').where({ target }).update(columns);
}

/** Deletes the rows whose key starts with one of `prefixes` (compared exactly: the column is binary; lengths in characters, as substr counts). */
export async function deleteAuthFailuresStartingWith(db: Queryable, prefixes: string[]): Promise<void> {
  await db('client_auth_failures')
    .where((any) => {
      for (const prefix of prefixes) {
        any.orWhereRaw('substr(??, 1, ?) = ?', ['target', Array.from(prefix).length, prefix]);
      }
    })
    .delete();
}

/** Forgets the windows started by `windowStartedBy` whose refusal, if any, is over at `now`. */
export async function deleteEndedAuthFailures(db: Queryable, windowStartedBy: number, now: number): Promise<void> {
  await db('client_auth_failures')
    .where('window_started_at', '<=', windowStartedBy)
    .where((over) => {
      over.whereNull('blocked_until').orWhere('blocked_until', '<=', now);
    })
    .delete();
}

/** The keys refused at `now`, with the time their refusal ends. */
export async function loadBlockedTargets(db: Queryable, now: number): Promise<Map<string, number>> {
  const rows = await db('client_auth_failures')
    .where('blocked_until', '>', now)
    .select<AuthFailureRow[]>('target', 'blocked_until');
  return new Map(rows.map((row) => [row.target, Number(row.blocked_until)]));
}
