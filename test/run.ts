/**
 * The test command: the whole suite on SQLite, then again on MySQL/MariaDB when one answers at
 * TEST_MYSQL_URL (default mysql://root@127.0.0.1:3306/test). Ends with one "N passed, N failed" line.
 * Given test files, runs only those (on both databases).
 */
import { spawn } from 'node:child_process';

import knex from 'knex';

import { mysqlServerUrl } from './support/database.ts';

async function mysqlReachable(): Promise<boolean> {
  const probe = knex({
    client: 'mysql2',
    connection: { uri: mysqlServerUrl, connectTimeout: 2000 } as never,
    pool: { min: 0, max: 1 },
  });
  try {
    await probe.raw('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await probe.destroy();
  }
}

type Counts = { passed: number; failed: number; skipped: number; code: number };

function runMocha(database: 'sqlite' | 'mysql', args: string[]): Promise<Counts> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['node_modules/mocha/bin/mocha.js', ...args], {
      env: { ...process.env, TEST_DATABASE: database },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      process.stdout.write(chunk);
      output += chunk.toString();
    });
    child.on('close', (code) => {
      const count = (word: string) => Number(new RegExp(`(\\d+) ${word}`).exec(output)?.[1] ?? 0);
      resolve({ passed: count('passing'), failed: count('failing'), skipped: count('pending'), code: code ?? 1 });
    });
  });
}

// Files given (`npm run fuzz`) run alone; otherwise the whole suite. Mocha would add a spec of its
// config file to the files given, so the suite's is here rather than in .mocharc.json.
const args = process.argv.slice(2);
if (!args.some((arg) => arg.endsWith('.ts'))) {
  args.push('test/**/*.test.ts');
}
const databases: Array<'sqlite' | 'mysql'> = ['sqlite'];
if (await mysqlReachable()) {
  databases.push('mysql');
} else {
  console.log(`\nNo MySQL/MariaDB at ${mysqlServerUrl}: running on SQLite only.`);
}

const total = { passed: 0, failed: 0, skipped: 0 };
let exitCode = 0;
for (const database of databases) {
  console.log(`\n=== tests on ${database} ===`);
  const counts = await runMocha(database, args);
  total.passed += counts.passed;
  total.failed += counts.failed;
  total.skipped += counts.skipped;
  if (counts.code !== 0) {
    exitCode = 1;
  }
}
console.log(`\n${total.passed} passed, ${total.failed} failed, ${total.skipped} skipped`);
process.exit(exitCode);
