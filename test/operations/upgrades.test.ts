import { expect } from 'chai';

import { openDatabase } from '../../lib/storage/database.ts';
import { freshDatabaseUrl } from '../support/database.ts';
import { startService } from '../support/service.ts';

/**
 * Rolling upgrades (docs/operations.md): instances of two releases share the database while the new
 * one rolls out, so an instance of the previous release must start, and be ready, on a schema that
 * already has the next release's migrations (each migration stays backward compatible for a release).
 */
describe('rolling upgrades', () => {
  it('an instance of the previous release still starts, warns, and is ready on a database the next release migrated', async () => {
    const dbUrl = await freshDatabaseUrl();
    const first = await startService({ dbUrl });
    await first.stop();
    // The next release's migration, as its first instance would have recorded it.
    const db = openDatabase(dbUrl);
    try {
      await db('knex_migrations').insert({ name: '9999_next_release', batch: 999, migration_time: new Date() });
    } finally {
      await db.destroy();
    }
    const previous = await startService({ dbUrl, logs: true });
    try {
      const ready = await previous.http.get('health/ready');
      expect(ready.statusCode, JSON.stringify(ready.body)).to.equal(200);
      const warning = previous
        .logs()
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Record<string, unknown>)
        .find((line) => String(line.msg).startsWith('the database has migrations of a newer release'));
      expect(warning).to.include({ level: 40 });
      expect(warning!.migrations).to.deep.equal(['9999_next_release']);
    } finally {
      await previous.stop();
    }
  });
});
