import { ConfigError } from '../config/env.ts';
import { isUniqueViolation, type Queryable } from '../storage/database.ts';
import { type ConfigTable, type Row, uniqueWhat } from './tables.ts';

/**
 * Every table access of an export or an import: generic over the configuration's tables
 * (tables.ts), since a file holds each of them as it is.
 */

/**
 * Rows in the order they were made (ties by id), so that a new entry lands at the end of its list;
 * a table without a creation time goes by the column given.
 */
export async function rowsOf(db: Queryable, table: ConfigTable, order = 'created_at'): Promise<Row[]> {
  return db(table).orderBy(order).orderBy('id').select<Row[]>('*');
}

/** A link table's rows ordered by `order`, with only the columns named. */
export async function linkRows(db: Queryable, table: ConfigTable, columns: string[], order: string): Promise<Row[]> {
  return db(table)
    .orderBy(order)
    .select<Row[]>(...columns);
}

/** A link table as lists of ids by the parent's id, sorted so that the file does not depend on the database's order. */
export async function linksOf(
  db: Queryable,
  table: ConfigTable,
  parent: string,
  child: string,
): Promise<Map<string, string[]>> {
  const rows = await db(table).select<Row[]>(parent, child);
  const byParent = new Map<string, string[]>();
  for (const row of rows) {
    byParent.set(String(row[parent]), [...(byParent.get(String(row[parent])) ?? []), String(row[child])]);
  }
  for (const list of byParent.values()) {
    list.sort();
  }
  return byParent;
}

/** Every value of one column, as text (the ids a file may refer to). */
export async function storedValues(db: Queryable, table: ConfigTable, column = 'id'): Promise<Set<string>> {
  return new Set((await db(table).pluck(column)).map(String));
}

/** Rows with the columns named, by their id. */
export async function storedById(db: Queryable, table: ConfigTable, ...columns: string[]): Promise<Map<string, Row>> {
  return new Map((await db(table).select<Row[]>('id', ...columns)).map((row) => [String(row.id), row]));
}

/** The stored row of this id, with the columns named, if there is one. */
export async function storedRow(db: Queryable, table: ConfigTable, id: string, ...columns: string[]) {
  return db(table)
    .where({ id })
    .first<Row | undefined>(...(columns.length > 0 ? columns : ['id']));
}

/** The rows of a table of one row at most (the captcha provider) other than `id`, deleted: the file's takes their place. */
export async function deleteOtherRows(trx: Queryable, table: ConfigTable, id: string): Promise<void> {
  await trx(table).whereNot({ id }).delete();
}

export type Counts = { created: number; updated: number };

/** Creates or updates one row by its id; a collision with another row on a unique column is refused, naming it. */
export async function upsert(
  trx: Queryable,
  table: ConfigTable,
  row: Row & { id: string },
  counts: Counts,
): Promise<void> {
  try {
    if (await storedRow(trx, table, row.id)) {
      await trx(table).where({ id: row.id }).update(row);
      counts.updated++;
    } else {
      await trx(table).insert(row);
      counts.created++;
    }
  } catch (error) {
    if (isUniqueViolation(error)) {
      throw new ConfigError(
        `${table} ${row.id}: another row in the database has the same ${uniqueWhat[table] ?? 'key'}; nothing was changed`,
      );
    }
    throw error;
  }
}

/** Makes a parent's links exactly the file's. */
export async function replaceLinks(trx: Queryable, table: ConfigTable, parent: Row, links: Row[]): Promise<void> {
  await trx(table).where(parent).delete();
  if (links.length > 0) {
    await trx(table).insert(links.map((link) => ({ ...parent, ...link })));
  }
}

/** Deletes the rows of `parent` whose ids the file no longer lists (a resource's dropped scopes). */
export async function deleteOthers(trx: Queryable, table: ConfigTable, parent: Row, keptIds: string[]): Promise<void> {
  await trx(table).where(parent).whereNotIn('id', keptIds).delete();
}

/** Sets `values` on every row but `id` (one default resource). */
export async function updateOthers(trx: Queryable, table: ConfigTable, id: string, values: Row): Promise<void> {
  await trx(table).whereNot({ id }).update(values);
}
