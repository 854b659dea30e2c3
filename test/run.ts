/**
 * The test command: the whole suite on SQLite, again on MySQL/MariaDB when one answers at
 * TEST_MYSQL_URL (default mysql://root@127.0.0.1:3306/test) and again on PostgreSQL when one answers
 * at TEST_POSTGRES_URL (default postgres://postgres@127.0.0.1:5432/postgres). Ends with one
 * "N passed, N failed" line. Given test files, runs only those (on every database).
 * TEST_ENGINES=postgres (or a comma-separated list of sqlite, mysql, postgres) runs only those.
 *
 * The databases' runs go side by side, each in mocha's parallel mode: TEST_JOBS worker processes
 * per database (default 2 on SQLite, 3 on MySQL and on PostgreSQL, whose suites wait longer on their
 * servers), each taking the next file, the largest first, as it finishes one. A suite waits on its
 * database, its services' HTTP and its browsers much of the time, so on two cores the workers finish
 * in about the time the CPU work takes. SQLite's output streams, file by file; the others' are
 * printed when they end, so they do not interleave. TEST_SERIAL=1 runs the databases one after the
 * other, each in one process.
 */
import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import knex from 'knex';

import { mysqlServerUrl, postgresServerUrl, type TestDatabase } from './support/database.ts';

const servers = {
  mysql: {
    name: 'MySQL/MariaDB',
    url: mysqlServerUrl,
    client: 'mysql2',
    connection: { uri: mysqlServerUrl, connectTimeout: 2000 },
  },
  postgres: {
    name: 'PostgreSQL',
    url: postgresServerUrl,
    client: 'pg',
    connection: { connectionString: postgresServerUrl, connectionTimeoutMillis: 2000 },
  },
} as const;

async function reachable(server: keyof typeof servers): Promise<boolean> {
  const { client, connection } = servers[server];
  const probe = knex({ client, connection: connection as never, pool: { min: 0, max: 1 } });
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

function runMocha(database: TestDatabase, args: string[], stream: boolean): Promise<Counts> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['node_modules/mocha/bin/mocha.js', ...args], {
      // Each database's run its own id: the end of one drops what its processes made, not the other's.
      env: { ...process.env, TEST_DATABASE: database, TEST_RUN_ID: `${process.env.TEST_RUN_ID}${database[0]}` },
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

// Files given (`npm run fuzz`) run alone, in one process per database; otherwise the whole suite.
// Mocha would add a spec of its config file to the files given, so the suite's is here rather than
// in .mocharc.json.
const args = process.argv.slice(2);
const filesGiven = args.some((arg) => arg.endsWith('.ts'));
const chosen = new Set((process.env.TEST_ENGINES ?? 'sqlite,mysql,postgres').split(',').map((name) => name.trim()));
const databases: TestDatabase[] = chosen.has('sqlite') ? ['sqlite'] : [];
for (const server of ['mysql', 'postgres'] as const) {
  if (!chosen.has(server)) {
    continue;
  }
  if (await reachable(server)) {
    databases.push(server);
  } else {
    console.log(`\nNo ${servers[server].name} at ${servers[server].url}: not running on it.`);
  }
}
if (databases.length === 0) {
  console.log(`\nNo database to run on (TEST_ENGINES=${process.env.TEST_ENGINES}).`);
  process.exit(1);
}

/** The suite's files, the largest first: a long file started last would keep its worker busy alone. */
function suiteFiles(): string[] {
  return readdirSync('test', { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.test.ts'))
    .map((file) => join('test', file))
    .sort()
    .sort((a, b) => statSync(b).size - statSync(a).size);
}

const defaultJobs = { sqlite: 2, mysql: 3, postgres: 3 };
const jobsOf = (database: TestDatabase) => Math.max(1, Number(process.env.TEST_JOBS ?? defaultJobs[database]));

const runs: Counts[] = [];
if (process.env.TEST_SERIAL === '1') {
  for (const database of databases) {
    console.log(`\n=== tests on ${database} ===`);
    runs.push(await runMocha(database, filesGiven ? args : [...args, ...suiteFiles()], true));
  }
} else {
  const argsOf = (database: TestDatabase) =>
    filesGiven ? args : ['--parallel', '--jobs', String(jobsOf(database)), ...args, ...suiteFiles()];
  console.log(`\n=== tests on ${databases.join(' and ')}, side by side (${databases[0]}'s output first) ===`);
  runs.push(
    ...(await Promise.all(databases.map((database, index) => runMocha(database, argsOf(database), index === 0)))),
  );
  for (const [index, counts] of runs.entries()) {
    if (index > 0) {
      console.log(`\n=== tests on ${databases[index]} ===`);
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
// The failures again, last: a long run's log is often read from its end.
for (const [index, counts] of runs.entries()) {
  const failing = /^ *\d+ failing$/m.exec(counts.output);
  if (failing) {
    const lines = counts.output.slice(failing.index).split('\n');
    console.log(`\n=== failures on ${databases[index]} ===`);
    console.log(lines.slice(0, 400).join('\n'));
  }
}
console.log(`\n${total.passed} passed, ${total.failed} failed, ${total.skipped} skipped`);
process.exit(exitCode);
