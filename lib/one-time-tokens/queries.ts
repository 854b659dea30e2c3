import { tenantId } from '../shared/tenant.ts';
import type { Queryable } from '../storage/database.ts';
import { jsonColumn } from '../storage/json-column.ts';
import { listPage, type Page } from '../storage/list.ts';
import { lookupDigest, openSecret, sealedColumns, sealSecret } from '../storage/sealed-columns.ts';
import { type OneTimeToken, oneTimeTokenContextSchema, type OneTimeTokenStatus } from './schemas.ts';

type Row = {
  id: string;
  email: string;
  email_key: string;
  token_digest: string;
  token: string;
  context: string;
  status: OneTimeTokenStatus;
  expires_at: number;
  created_at: number;
};

const contextOf = jsonColumn('one_time_tokens', 'context', oneTimeTokenContextSchema);

/** An Active token past its expiry is Expired, whatever the row says yet. */
const statusOf = (row: Row, now: number): OneTimeTokenStatus =>
  row.status === 'active' && row.expires_at <= now ? 'expired' : row.status;

function toToken(db: Queryable, row: Row, now = Date.now()): OneTimeToken {
  return {
    tenantId,
    id: row.id,
    email: row.email,
    token: openSecret(db, sealedColumns.oneTimeTokens, row.id, row.token),
    context: contextOf(row.context),
    status: statusOf(row, now),
    expiresAt: row.expires_at,
    createdAt: row.created_at,
  };
}

export type NewOneTimeToken = Pick<OneTimeToken, 'id' | 'email' | 'token' | 'context' | 'expiresAt'>;

export async function insertOneTimeToken(db: Queryable, token: NewOneTimeToken): Promise<OneTimeToken> {
  const row: Row = {
    id: token.id,
    email: token.email,
    email_key: token.email.toLowerCase(),
    token_digest: lookupDigest(token.token),
    token: sealSecret(db, sealedColumns.oneTimeTokens, token.id, token.token),
    context: JSON.stringify(token.context),
    status: 'active',
    expires_at: token.expiresAt,
    created_at: Date.now(),
  };
  await db('one_time_tokens').insert(row);
  return toToken(db, row);
}

/** Rows of `email` still Active past their expiry say so (Logto updates them when a new token is made). */
export async function markExpired(db: Queryable, email: string, now = Date.now()): Promise<void> {
  await db('one_time_tokens')
    .where({ email_key: email.toLowerCase(), status: 'active' })
    .where('expires_at', '<=', now)
    .update({ status: 'expired' });
}

export async function findOneTimeToken(db: Queryable, id: string): Promise<OneTimeToken | undefined> {
  const row = await db('one_time_tokens').where({ id }).first<Row | undefined>();
  return row && toToken(db, row);
}

export async function findOneTimeTokenByValue(db: Queryable, token: string): Promise<OneTimeToken | undefined> {
  const row = await db('one_time_tokens')
    .where({ token_digest: lookupDigest(token) })
    .first<Row | undefined>();
  return row && toToken(db, row);
}

export type OneTimeTokenFilter = { email?: string; status?: OneTimeTokenStatus };

export async function listOneTimeTokens(
  db: Queryable,
  filter: OneTimeTokenFilter,
  page: Page,
): Promise<{ items: OneTimeToken[]; total: number }> {
  const now = Date.now();
  const query = db('one_time_tokens').select('*');
  if (filter.email) {
    query.where({ email_key: filter.email.toLowerCase() });
  }
  if (filter.status === 'active') {
    query.where({ status: 'active' }).where('expires_at', '>', now);
  } else if (filter.status === 'expired') {
    query.where((expired) => {
      void expired.where({ status: 'expired' }).orWhere((past) => {
        void past.where({ status: 'active' }).where('expires_at', '<=', now);
      });
    });
  } else if (filter.status) {
    query.where({ status: filter.status });
  }
  // The order goes to listPage, which sorts only the page: an ORDER BY left on the counting query
  // makes PostgreSQL refuse it (created_at is neither grouped nor aggregated); SQLite and MySQL allow it.
  const { rows, total } = await listPage<Row>(query, page, [
    { column: 'created_at', order: 'desc' },
    { column: 'id', order: 'desc' },
  ]);
  return { items: rows.map((row) => toToken(db, row, now)), total };
}

/**
 * Sets a token's status. `from` makes it conditional: consuming is `Active` → `Consumed` only
 * while the token is unexpired, so of two concurrent verifications exactly one changes the row.
 */
export async function updateOneTimeTokenStatus(
  db: Queryable,
  id: string,
  status: OneTimeTokenStatus,
  from?: { status: 'active'; unexpiredAt: number },
): Promise<boolean> {
  const query = db('one_time_tokens').where({ id });
  if (from) {
    query.where({ status: from.status }).where('expires_at', '>', from.unexpiredAt);
  }
  return (await query.update({ status })) === 1;
}

export async function deleteOneTimeToken(db: Queryable, id: string): Promise<boolean> {
  return (await db('one_time_tokens').where({ id }).delete()) > 0;
}
