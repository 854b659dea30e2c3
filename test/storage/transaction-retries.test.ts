import { expect } from 'chai';
import type { Knex } from 'knex';

import { openDatabase } from '../../lib/storage/database.ts';
import { retryDelayMs, transactionAttempts, withTransaction } from '../../lib/storage/transaction.ts';
import { freshDatabaseUrl } from '../support/database.ts';

/** What MySQL and a Galera node answer a deadlock victim or a certification conflict with. */
const deadlock = () =>
  Object.assign(new Error('Deadlock found when trying to get lock; try restarting transaction'), {
    code: 'ER_LOCK_DEADLOCK',
    errno: 1213,
  });

describe('the transaction helper runs a deadlock victim again', () => {
  let db: Knex;
  before(async () => {
    db = openDatabase(await freshDatabaseUrl());
  });
  after(async () => {
    await db.destroy();
  });

  it('for long enough to outlast a burst of Galera certification conflicts (9 in a row)', async function () {
    this.timeout(30_000);
    // Two nodes writing one row: a burst of colliders can lose several times running.
    let runs = 0;
    const answer = await withTransaction(db, () => {
      runs += 1;
      if (runs <= 9) {
        throw deadlock();
      }
      return Promise.resolve('committed');
    });
    expect(answer).to.equal('committed');
    expect(runs).to.equal(10);
  });

  it('gives up after its attempts with the database error', async function () {
    this.timeout(60_000);
    let runs = 0;
    const failing = withTransaction(db, () => {
      runs += 1;
      throw deadlock();
    });
    await failing.then(
      () => expect.fail('it committed'),
      (error: unknown) => expect(error).to.include({ code: 'ER_LOCK_DEADLOCK' }),
    );
    expect(runs).to.equal(transactionAttempts);
  });

  it('waits a random time up to a capped exponential bound before each retry (full jitter)', () => {
    const bound = (attempt: number) => retryDelayMs(attempt, () => 1);
    const bounds = Array.from({ length: transactionAttempts - 1 }, (_, index) => bound(index + 1));
    // Doubling, then capped: colliders spread out fast, and no wait grows past the cap.
    for (let index = 1; index < bounds.length; index++) {
      expect(bounds[index]).to.be.at.least(bounds[index - 1]);
    }
    expect(bounds[1]).to.equal(bounds[0] * 2);
    expect(bounds.at(-1)).to.equal(bounds.at(-2));
    expect(bounds.at(-1)).to.be.at.most(1000);
    // Full jitter: anywhere from nothing to the bound.
    expect(retryDelayMs(5, () => 0)).to.equal(0);
    expect(retryDelayMs(5, () => 0.5)).to.equal(bound(5) / 2);
  });
});
