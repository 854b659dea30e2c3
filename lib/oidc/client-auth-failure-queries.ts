import type { Knex } from 'knex';

import type { Queryable } from '../storage/database.ts';

/* `client_auth_failures`: failed client authentications counted per key (a client id, an address). */

export type ClientAuthFailureRow = {
  target: string;
  failures: number;
  window_started_at: number | string;
  blocked_until: number | string | null;
};

/**
 * Counts one failure against the key and reads its row back. One upsert takes the row's write lock
 * at once: concurrent failures count one after the other.
 */
export async function countClientAuthFailure(
  trx: Knex.Transaction,
  target: string,
  now: number,
): Promise<ClientAuthFailureRow> {
  await trx('client_auth_failures')
    .insert({ target, failures: 1, window_started_at: now, blocked_until: null })
    .onConflict('target')
    .merge({ failures: trx.raw('?? + 1', ['client_auth_failures.failures']) });
  return trx('client_auth_failures').where({ target }).first<ClientAuthFailureRow>();
}

export async function updateClientAuthFailure(trx: Knex.Transaction, row: ClientAuthFailureRow): Promise<void> {
  const { target, ...columns } = row;
  await trx('client_auth_failures').where({ target }).update(columns);
}

export async function deleteClientAuthFailures(db: Queryable, targets: string[]): Promise<void> {
  await db('client_auth_failures').whereIn('target', targets).delete();
}

/** Forgets the windows started by `windowStartedBy` whose refusal, if any, is over at `now`. */
export async function deleteEndedClientAuthFailures(
  db: Queryable,
  windowStartedBy: number,
  now: number,
): Promise<void> {
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
    .select<ClientAuthFailureRow[]>('target', 'blocked_until');
  return new Map(rows.map((row) => [row.target, Number(row.blocked_until)]));
}
