import { dropCreatedDatabases } from './database.ts';

/** Root hooks: MySQL databases made for the run are dropped at its end. */
export const mochaHooks = {
  async afterAll(this: Mocha.Context) {
    // Dropping every database the run made can take longer than a test's 30 s on a busy server.
    this.timeout(300_000);
    await dropCreatedDatabases();
  },
};
