import { dropCreatedDatabases } from './database.ts';

/** Root hooks: MySQL databases made for the run are dropped at its end. */
export const mochaHooks = {
  async afterAll() {
    await dropCreatedDatabases();
  },
};
