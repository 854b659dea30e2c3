import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { expect } from 'chai';

import { enqueueEvent } from '../../lib/hooks/outbox.ts';
import { insertHook } from '../../lib/hooks/queries.ts';
import { openDatabase } from '../../lib/storage/database.ts';
import { generateId, generateSecret } from '../../lib/storage/ids.ts';
import { migrateToLatest } from '../../lib/storage/migrate.ts';
import { SharedCache } from '../../lib/storage/shared-cache.ts';
import { withTransaction } from '../../lib/storage/transaction.ts';
import { builtScripts, useBuild } from '../support/build.ts';
import { freshDatabaseUrl } from '../support/database.ts';
import { eventually } from '../support/eventually.ts';
import { Receiver } from './receiver.ts';

describe('hooks: npm run dispatcher', () => {
  useBuild();
  it('delivers the outbox from its own process and stops cleanly on SIGTERM', async () => {
    const dbUrl = await freshDatabaseUrl();
    const receiver = await Receiver.start();
    // A slow answer: SIGTERM arrives while a request is in flight, which is let finish.
    receiver.answer = (_request, index) => ({ status: 200, delayMs: index === 5 ? 1500 : 0 });
    const db = openDatabase(dbUrl);
    const hookId = generateId();
    try {
      await migrateToLatest(db);
      const cache = new SharedCache(db);
      await db.transaction((trx) =>
        insertHook(trx, {
          tenantId: 'default',
          id: hookId,
          name: 'cli',
          event: null,
          events: ['User.Created'],
          config: { url: receiver.url },
          signingKey: generateSecret(),
          enabled: true,
          createdAt: Date.now(),
          signatureScheme: 'hmac-sha256',
          payload: 'full',
          excludeApplicationIds: [],
        }),
      );
      await cache.sync();
      for (let index = 0; index < 5; index++) {
        await db.transaction((trx) => enqueueEvent(trx, cache, 'User.Created', { data: { index } }));
      }
    } finally {
      // On SQLite the two processes would share the file fine, but this one has nothing more to write.
      await db.destroy();
    }

    const child = spawn(process.execPath, [builtScripts.dispatcher], {
      env: {
        ...process.env,
        DB_URL: dbUrl,
        NODE_ENV: 'production',
        LOG_LEVEL: 'info',
        HOOKS_ALLOW_PRIVATE_TARGETS: 'true',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    try {
      await receiver.waitFor(5, 20_000);
      expect(new Set(receiver.ids).size).to.equal(5);

      // One more, written while the dispatcher runs: found by its poll.
      const again = openDatabase(dbUrl);
      try {
        const cache = new SharedCache(again);
        await cache.sync();
        // Another process writes this SQLite file meanwhile: the helper takes its write lock first (a
        // transaction that read first could not upgrade its snapshot), as the service's writes do.
        await withTransaction(again, (trx) => enqueueEvent(trx, cache, 'User.Created', { data: { index: 5 } }));
      } finally {
        await again.destroy();
      }
      await receiver.waitFor(6, 10_000);
      child.kill('SIGTERM');
      const [code] = await once(child, 'exit');
      expect(code, output).to.equal(0);
      expect(output).to.include('webhook dispatcher started');

      const check = openDatabase(dbUrl);
      try {
        // The request in flight at SIGTERM finished and was recorded.
        await eventually(
          async () => {
            const statuses = await check('hook_deliveries').where({ hook_id: hookId }).pluck('status');
            return statuses.length === 6 && statuses.every((status) => status === 'succeeded');
          },
          2000,
          'all succeeded',
        );
      } finally {
        await check.destroy();
      }
    } finally {
      if (child.exitCode === null) {
        child.kill('SIGKILL');
      }
      await receiver.close();
    }
  });
});
