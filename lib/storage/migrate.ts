import { readdir } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';

import type { Knex } from 'knex';

const folder = new URL('../../migrations/', import.meta.url);
const migrationFile = /^\d{4}_[\w-]+\.ts$/;

type Migration = { up: (db: Knex) => Promise<void>; down: (db: Knex) => Promise<void> };

/** Reads `migrations/` in name order; names are stored without their extension. */
const source: Knex.MigrationSource<string> = {
  async getMigrations() {
    const files = await readdir(fileURLToPath(folder));
    return files.filter((file) => migrationFile.test(file)).sort();
  },
  getMigrationName: (file) => file.replace(/\.ts$/, ''),
  getMigration: async (file) => (await import(pathToFileURL(fileURLToPath(new URL(file, folder))).href)) as Migration,
};

/** Brings the schema up to date. Several instances may start at once: the loser of the lock waits. */
export async function migrateToLatest(db: Knex): Promise<string[]> {
  for (let attempt = 0; ; attempt++) {
    try {
      const [, applied] = (await db.migrate.latest({ migrationSource: source })) as [number, string[]];
      return applied;
    } catch (error) {
      if ((error as Error).name !== 'MigrationLocked' || attempt >= 120) {
        throw error;
      }
      await sleep(500);
    }
  }
}
