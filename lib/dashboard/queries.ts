import type { Knex } from 'knex';

import { tokenExchangeLogKey } from '../oidc/grants/token-exchange/token-exchange.ts';

export const dayMs = 24 * 60 * 60 * 1000;

/** Logto's audit key for a completed sign-in interaction. */
export const signInLogKey = 'Interaction.SignIn.Submit';

export type DayCounts = {
  /** Start of the day (UTC), in milliseconds. */
  day: number;
  signIns: number;
  registrations: number;
  tokenExchanges: { success: number; failure: number };
  webhookDeliveries: { success: number; failure: number };
};

export type Dashboard = { since: number; days: DayCounts[]; webhookLatencyP50Ms: number | null };

/** A row's UTC day, in SQL that SQLite and MySQL both run (no FLOOR or date functions needed). */
const dayOf = (db: Knex, column: string) => db.raw('?? - (?? % ?)', [column, column, dayMs]);

type Bucket = { day: number | string; total: number | string; failures?: number | string | null };

async function perDay(
  query: Knex.QueryBuilder,
  db: Knex,
  failures?: Knex.Raw,
): Promise<Map<number, { total: number; failures: number }>> {
  const rows = await query
    .select({ day: dayOf(db, 'created_at') })
    .count({ total: '*' })
    .modify((builder) => {
      if (failures) {
        builder.sum({ failures });
      }
    })
    .groupBy<Bucket[]>('day');
  return new Map(
    rows.map((row) => [Number(row.day), { total: Number(row.total), failures: Number(row.failures ?? 0) }]),
  );
}

/**
 * Daily counts over the last `days` days (today included) from where the facts are kept: the
 * audit log (sign-ins, token exchanges), users' creation times, and webhook delivery attempts.
 */
export async function readDashboard(db: Knex, days: number, now = Date.now()): Promise<Dashboard> {
  const today = now - (now % dayMs);
  const since = today - (days - 1) * dayMs;
  // The audit payload is stored as JSON text with `result` at its top level; a quote inside a string
  // value is escaped, so this sequence can only be that key.
  const exchangeFailed = db.raw(`case when payload like '%"result":"Error"%' then 1 else 0 end`);
  const attemptFailed = db.raw(`case when result = 'Success' then 0 else 1 end`);
  const [signIns, registrations, exchanges, deliveries, latency] = await Promise.all([
    perDay(db('logs').where({ key: signInLogKey }).where('created_at', '>=', since), db),
    perDay(db('users').where('created_at', '>=', since), db),
    perDay(db('logs').where({ key: tokenExchangeLogKey }).where('created_at', '>=', since), db, exchangeFailed),
    perDay(db('hook_attempts').where('created_at', '>=', since), db, attemptFailed),
    medianDuration(db, since),
  ]);
  const series: DayCounts[] = [];
  for (let day = since; day <= today; day += dayMs) {
    const exchange = exchanges.get(day) ?? { total: 0, failures: 0 };
    const delivery = deliveries.get(day) ?? { total: 0, failures: 0 };
    series.push({
      day,
      signIns: signIns.get(day)?.total ?? 0,
      registrations: registrations.get(day)?.total ?? 0,
      tokenExchanges: { success: exchange.total - exchange.failures, failure: exchange.failures },
      webhookDeliveries: { success: delivery.total - delivery.failures, failure: delivery.failures },
    });
  }
  return { since, days: series, webhookLatencyP50Ms: latency };
}

/** The median duration of delivery attempts since `since`: the middle row by duration (indexed by time, read once). */
async function medianDuration(db: Knex, since: number): Promise<number | null> {
  const attempts = db('hook_attempts').where('created_at', '>=', since);
  const [{ total }] = await attempts.clone().count<Array<{ total: number | string }>>({ total: '*' });
  const count = Number(total);
  if (count === 0) {
    return null;
  }
  const middle = await attempts
    .clone()
    .select('duration_ms')
    .orderBy('duration_ms')
    .offset(Math.floor((count - 1) / 2))
    .first<{ duration_ms: number } | undefined>();
  // Gone only if attempts were deleted between the two reads.
  return middle?.duration_ms ?? 0;
}
