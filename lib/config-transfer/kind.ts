import type { Queryable } from '../storage/database.ts';
import { generateSecret } from '../storage/ids.ts';
import type { ConfigFile } from './file.ts';
import { type Counts, storedRow } from './queries.ts';
import type { ConfigTable } from './tables.ts';

/** The file's lists (every field but `version` and the two settings). */
export type ListName = Exclude<keyof ConfigFile, 'version' | 'accountCenter' | 'signInExperience'>;

/** An entry of one of the file's lists. */
export type Entry<K extends ListName> = NonNullable<ConfigFile[K]> extends Array<infer E> ? E : never;

export type ExportOptions = {
  /**
   * Client secrets (the legacy and the named ones), hook signing keys, connector secrets and the
   * captcha provider's secret key, opened (they are left out otherwise).
   */
  withSecrets: boolean;
  /** The application BOOTSTRAP_ADMIN_CLIENT_ID keeps: the environment makes it, not the file. */
  bootstrapAdminId?: string;
};

/** What an import has done so far: rows written, and what the operator must still do. */
export type ImportProgress = Counts & { notes: string[] };

/**
 * One kind of entry a file holds (resources, hooks, …): how its rows become the file's entries and
 * how the file's entries become rows. An import writes the kinds in the order of `kinds/all.ts`, each
 * after those it refers to; entries the file does not name are left alone.
 */
export type Kind<K extends ListName> = {
  list: K;
  exported(db: Queryable, options: ExportOptions): Promise<Array<Entry<K>>>;
  imported(trx: Queryable, entries: Array<Entry<K>>, progress: ImportProgress): Promise<void>;
};

// Column readers: a driver returns booleans as 0/1 and JSON as text. A string column holding one of a
// field's values is asserted to the field's type by the kinds: the database holds what the API let in.
export const json = (value: unknown): Record<string, unknown> => JSON.parse(String(value)) as Record<string, unknown>;
export const number = (value: unknown) => Number(value);
export const boolean = (value: unknown) => Boolean(value);
export const text = (value: unknown) => {
  if (value !== null && typeof value !== 'string') {
    throw new Error(`expected a nullable text column, found a ${typeof value}`);
  }
  return value;
};

/** The ids of a list, once each (a file may repeat one in a list of links). */
export const once = <T>(values: T[]) => [...new Set(values)];

/**
 * The secret to write into a row: the file's; for a new row without one, one made here (noted: the
 * operator must hand it out); for a stored row without one, none (it keeps its own).
 */
export async function secretToWrite(
  trx: Queryable,
  table: ConfigTable,
  id: string,
  given: string | undefined,
  progress: ImportProgress,
  note: string,
  make: () => string = generateSecret,
): Promise<string | undefined> {
  if (given !== undefined) {
    return given;
  }
  if (await storedRow(trx, table, id)) {
    return undefined;
  }
  progress.notes.push(note);
  return make();
}
