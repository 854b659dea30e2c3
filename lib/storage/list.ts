import type { Knex } from 'knex';

/** A slice of a list; without `limit` the whole list. */
export type Page = { limit?: number; offset: number };

export function applyPage<T extends Knex.QueryBuilder>(query: T, page: Page): T {
  return page.limit === undefined ? query : (query.limit(page.limit).offset(page.offset) as T);
}

/**
 * Case-insensitive substring match on any of the columns. `!` is the LIKE escape character because
 * SQLite has no default one and MySQL reads a backslash in a literal as an escape itself.
 */
export function whereContains(query: Knex.QueryBuilder, columns: string[], term: string): void {
  const pattern = `%${term.replace(/[!%_]/g, '!$&')}%`;
  query.where((any) => {
    for (const column of columns) {
      any.orWhereRaw(`lower(??) like lower(?) escape '!'`, [column, pattern]);
    }
  });
}

/** Prefix match, by index where there is one (SQLite's LIKE also ignores ASCII case). */
export function whereStartsWith(query: Knex.QueryBuilder, column: string, prefix: string): void {
  query.whereRaw(`?? like ? escape '!'`, [column, `${prefix.replace(/[!%_]/g, '!$&')}%`]);
}

/** Runs a filtered query twice: once to count, once for the page, newest first. */
// eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- knex's builders do not carry their row type, so each caller names it here (a typed parameter rejects their builders)
export async function listPage<Row>(
  query: Knex.QueryBuilder,
  page: Page,
  order: Array<{ column: string; order?: 'asc' | 'desc' }> = [
    { column: 'created_at', order: 'desc' },
    { column: 'id' },
  ],
): Promise<{ rows: Row[]; total: number }> {
  // knex types a count as a number or a string (drivers differ).
  const [counted] = await query.clone().clearSelect().count<Array<{ total: number | string }>>({ total: '*' });
  const rows = (await applyPage(query.clone().orderBy(order), page)) as Row[];
  return { rows, total: Number(counted.total) };
}
