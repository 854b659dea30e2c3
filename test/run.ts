/**
 * The test command: the whole suite on SQLite and again on MySQL/MariaDB when one answers at
 * TEST_MYSQL_URL (default mysql://root@127.0.0.1:3306/test). Ends with one "N passed, N failed" line.
 * Given test files, runs only those (on both databases).
 *
 * The two databases' runs go side by side (each suite waits on its database and its services' HTTP
 * much of the time, so together they take little longer than the slower one alone); SQLite's output
 * streams, MySQL's is printed when it ends so the two never interleave. TEST_SERIAL=1 runs them one
 * after the other.
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

type Counts = { passed: number; failed: number; skipped: number; code: number; output: string };

function runMocha(database: 'sqlite' | 'mysql', args: string[], stream: boolean): Promise<Counts> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['node_modules/mocha/bin/mocha.js', ...args], {
      env: { ...process.env, TEST_DATABASE: database },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      if (stream) {
        process.stdout.write(chunk);
      }
      output += chunk.toString();
    });
    child.on('close', (code) => {
      const count = (word: string) => Number(new RegExp(`(\\d+) ${word}`).exec(output)?.[1] ?? 0);
      resolve({
        passed: count('passing'),
        failed: count('failing'),
        skipped: count('pending'),
        code: code ?? 1,
        output,
      });
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

const runs: Counts[] = [];
if (process.env.TEST_SERIAL === '1') {
  for (const database of databases) {
    console.log(`\n=== tests on ${database} ===`);
    runs.push(await runMocha(database, args, true));
  }
} else {
  console.log(`\n=== tests on ${databases.join(' and ')}, side by side (${databases[0]}'s output first) ===`);
  runs.push(...(await Promise.all(databases.map((database, index) => runMocha(database, args, index === 0)))));
  for (const [index, counts] of runs.entries()) {
    if (index > 0) {
      console.log(`\n=== tests on ${databases[index] ?? ''} ===`);
      process.stdout.write(counts.output);
    }
  }
}

const total = { passed: 0, failed: 0, skipped: 0 };
let exitCode = 0;
for (const counts of runs) {
  total.passed += counts.passed;
  total.failed += counts.failed;
  total.skipped += counts.skipped;
  if (counts.code !== 0) {
    exitCode = 1;
  }
}
console.log(`\n${total.passed} passed, ${total.failed} failed, ${total.skipped} skipped`);
process.exit(exitCode);
