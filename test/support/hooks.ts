import { dropCreatedDatabases, dropRunDatabases } from './database.ts';

/** Root hooks: the MySQL databases a test file made are dropped at its end. */
export const mochaHooks = {
  async afterAll(this: Mocha.Context) {
    // Dropping every database the file made can take longer than a test's 30 s on a busy server.
    this.timeout(300_000);
    await dropCreatedDatabases();
  },
};

/** Once, in mocha's main process after every file: what the run's processes made, templates included. */
export async function mochaGlobalTeardown(): Promise<void> {
  await dropRunDatabases();
}
