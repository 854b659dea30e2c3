import { loadConfig } from '../config/env.ts';
import { openDatabase } from './database.ts';
import { migrateToLatest } from './migrate.ts';

const config = loadConfig();
const db = openDatabase(config.dbUrl);
try {
  const applied = await migrateToLatest(db);
  console.log(applied.length > 0 ? `applied: ${applied.join(', ')}` : 'already up to date');
} finally {
  await db.destroy();
}
