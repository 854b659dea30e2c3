import { readdir } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Knex } from 'knex';

import { runsBuild } from '../config/package-folder.ts';

/** migrations/ beside lib/: the sources' .ts files, or in dist/ the build's .js files. */
const folder = new URL('../../migrations/', import.meta.url);
const extension = runsBuild ? '.js' : '.ts';
const migrationFile = new RegExp(`^\\d{4}_[\\w-]+\\${extension}$`);

type Migration = { up: (db: Knex) => Promise<void>; down: (db: Knex) => Promise<void> };

/** Reads `migrations/` in name order; names are stored without their extension (the same for both). */
const source: Knex.MigrationSource<string> = {
  async getMigrations() {
    const files = await readdir(fileURLToPath(folder));
    return files.filter((file) => migrationFile.test(file)).sort();
  },
  getMigrationName: (file) => file.slice(0, -extension.length),
  getMigration: async (file) => (await import(pathToFileURL(fileURLToPath(new URL(file, folder))).href)) as Migration,
};

const knownMigrations = async () => (await source.getMigrations([])).map((file) => source.getMigrationName(file));

/** The newest migration this code has, by name: a database without it is behind this code. */
export async function latestMigration(): Promise<string | undefined> {
  return (await knownMigrations()).at(-1);
}

/**
 * Migrations recorded in the database that this code does not have: a newer release migrated it.
 * This release runs on that schema (each migration stays backward compatible for one release,
 * docs/operations.md), which is what lets the two run side by side during a rolling upgrade.
 */
export async function migrationsFromNewerRelease(db: Knex): Promise<string[]> {
  const known = new Set(await knownMigrations());
  const recorded = await db('knex_migrations').pluck<string[]>('name');
  return recorded.filter((name) => !known.has(name));
}

/**
 * Instances starting together race on knex's bookkeeping tables; the loser waits and tries again
 * (the migrations themselves run once, under knex's lock).
 */
const startRace = (error: unknown) =>
  (error as Error).name === 'MigrationLocked' ||
  // SQLite refuses at once a transaction that read and would then write while another holds the write lock.
  (error as { code?: unknown }).code === 'SQLITE_BUSY' ||
  /knex_migrations\S*`? .*already exists/i.test((error as Error).message) ||
  // PostgreSQL: two `create table` of one name at once; the loser breaks the catalogue's unique key.
  /^create table "knex_migrations\S*" .* - duplicate key value violates unique constraint/.test(
    (error as Error).message,
  );

/**
 * knex's bookkeeping tables, as knex makes them, with the lock's one row written here. knex inserts
 * that row when it finds the table empty: two instances starting together can both find it so, and
 * with two rows its lock can never be taken (every start waits, then fails). Row 1 is inserted
 * unless it exists, so a race leaves one row; extra rows an earlier race left are removed (they
 * hold no lock: with two rows none could be taken).
 */
async function ensureBookkeeping(db: Knex): Promise<void> {
  const tables: Record<string, (table: Knex.CreateTableBuilder) => void> = {
    knex_migrations: (table) => {
      table.increments();
      table.string('name');
      table.integer('batch');
      table.timestamp('migration_time');
    },
    knex_migrations_lock: (table) => {
      table.increments('index').primary();
      table.integer('is_locked');
    },
  };
  for (const [name, columns] of Object.entries(tables)) {
    if (!(await db.schema.hasTable(name))) {
      await db.schema.createTable(name, columns);
    }
  }
  await db('knex_migrations_lock').insert({ index: 1, is_locked: 0 }).onConflict('index').ignore();
  await db('knex_migrations_lock').whereNot({ index: 1 }).delete();
}

/** How long an instance waits for another's migrations (a first run on MySQL takes a while). */
const lockWaitMs = 5 * 60 * 1000;

/** Brings the schema up to date. */
export async function migrateToLatest(db: Knex): Promise<string[]> {
  const started = Date.now();
  for (;;) {
    try {
      await ensureBookkeeping(db);
      // A newer release's migrations in the database are no reason to stop (migrationsFromNewerRelease).
      const [, applied] = (await db.migrate.latest({
        migrationSource: source,
        disableMigrationsListValidation: true,
      })) as [number, string[]];
      return applied;
    } catch (error) {
      if (!startRace(error) || Date.now() - started > lockWaitMs) {
        throw error;
      }
      await sleep(100 + Math.random() * 400);
    }
  }
}
