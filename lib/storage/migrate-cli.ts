import { ConfigError, loadConfig } from '../config/env.ts';
import { connectDatabase } from './database.ts';
import { migrateToLatest } from './migrate.ts';

try {
  const config = loadConfig();
  const db = await connectDatabase(config, (reason) =>
    console.error(`database not reachable yet (${reason}), retrying`),
  );
  try {
    const applied = await migrateToLatest(db);
    console.log(applied.length > 0 ? `applied: ${applied.join(', ')}` : 'already up to date');
  } finally {
    await db.destroy();
  }
} catch (error) {
  if (!(error instanceof ConfigError)) {
    throw error;
  }
  console.error(error.message);
  process.exitCode = 1;
}
