import { copyFileSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import Database from 'better-sqlite3';
import { expect } from 'chai';

import { eventually } from '../hooks/receiver.ts';
import { testDatabase } from '../support/database.ts';
import { startService } from '../support/service.ts';
import { unique } from '../support/values.ts';

/** The names of the applications in a copy of the database file alone, without its write-ahead log. */
function applicationsInFileAlone(file: string, folder: string): string[] {
  const copy = join(folder, `copy-${Date.now()}.sqlite3`);
  copyFileSync(file, copy);
  const connection = new Database(copy, { readonly: true });
  try {
    return connection
      .prepare<[], { name: string }>('select name from applications')
      .all()
      .map((row) => row.name);
  } finally {
    connection.close();
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
        // A few pages of log: far below the line at which the writing connection would copy it itself.
        expect(statSync(`${file}-wal`).size).to.be.below(16_000 * 4096);

        await eventually(() => applicationsInFileAlone(file, folder).includes(name), 5000, 'the row in the file');
      } finally {
        await service.stop();
        rmSync(folder, { recursive: true, force: true });
      }
    });
  },
);
