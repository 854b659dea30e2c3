import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { expect } from 'chai';

import { testDatabase } from '../support/database.ts';
import { eventually } from '../support/eventually.ts';
import { startService } from '../support/service.ts';
import { unique } from '../support/values.ts';

/**
 * The names of the applications in a copy of the database file alone, without its write-ahead log;
 * none when the copy caught a checkpoint halfway (a torn copy is why `cp` is no backup).
 */
function applicationsInFileAlone(file: string, folder: string): string[] {
  const copy = join(folder, `copy-${Date.now()}.sqlite3`);
  copyFileSync(file, copy);
  let connection: Database.Database | undefined;
  try {
    connection = new Database(copy, { readonly: true });
    return connection
      .prepare<[], { name: string }>('select name from applications')
      .all()
      .map((row) => row.name);
  } catch {
    return [];
  } finally {
    connection?.close();
  }
}

(testDatabase === 'sqlite' ? describe : describe.skip)(
  'SQLite: the write-ahead log copied into the database file',
  () => {
    it('a copy of the database file alone holds what was committed a moment ago, copied beside the requests', async () => {
      const service = await startService();
      const folder = mkdtempSync(join(tmpdir(), 'wal-checkpoints-'));
      try {
        const file = service.config.dbUrl.slice('sqlite:'.length);
        const name = unique('checkpointed');
        const created = await service.api.post('applications', { json: { name, type: 'MachineToMachine' } });
        expect(created.statusCode).to.equal(200);

        await eventually(() => applicationsInFileAlone(file, folder).includes(name), 5000, 'the row in the file');
      } finally {
        await service.stop();
        rmSync(folder, { recursive: true, force: true });
      }
    });
  },
);
