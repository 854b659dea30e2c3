import { Writable } from 'node:stream';
import { createInterface } from 'node:readline/promises';
import { parseArgs } from 'node:util';

import { loadConfig } from '../config/env.ts';
import { RequestError } from '../http/errors.ts';
import { openDatabase } from '../storage/database.ts';
import { migrateToLatest } from '../storage/migrate.ts';
import { SharedCache } from '../storage/shared-cache.ts';
import { createAdministrator } from './administrators.ts';

const usage = 'usage: npm run cli -- create-admin [--username <name>] [--password <password>] (missing values are asked for)';

/** Asks on the terminal; a hidden answer is not echoed (its keystrokes go to a stream that drops them). */
async function ask(question: string, hidden = false): Promise<string> {
  process.stdout.write(question);
  const output = hidden ? new Writable({ write: (_chunk, _encoding, done) => done() }) : process.stdout;
  const prompt = createInterface({ input: process.stdin, output, terminal: Boolean(process.stdin.isTTY) });
  try {
    return (await prompt.question('')).trim();
  } finally {
    prompt.close();
    if (hidden) {
      process.stdout.write('\n');
    }
  }
}

/**
 * `create-admin`: a user holding the console administrator role, made from a terminal. Unlike the
 * console's first run it works when administrators exist already (whoever runs it holds the
 * database): the way back in when every administrator is locked out.
 */
async function createAdmin(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { username: { type: 'string' }, password: { type: 'string' } } });
  const username = values.username ?? (await ask('Username: '));
  const password = values.password ?? (await ask('Password: ', true));
  const config = loadConfig();
  const db = openDatabase(config.dbUrl);
  try {
    await migrateToLatest(db);
    const user = await createAdministrator(db, new SharedCache(db), { username, password }, { onlyFirst: false });
    console.log(`Created administrator ${username} (user id ${user.id}). Sign in at ${config.endpoint}/console`);
  } finally {
    await db.destroy();
  }
}

const [command, ...rest] = process.argv.slice(2);
try {
  if (command !== 'create-admin') {
    throw new Error(usage);
  }
  await createAdmin(rest);
} catch (error) {
  if (error instanceof RequestError) {
    const issues = (error.data as { issues?: Array<{ code: string }> } | undefined)?.issues;
    console.error(`${error.message}${issues ? ` (${issues.map((issue) => issue.code).join(', ')})` : ''}`);
  } else {
    console.error(error instanceof Error ? error.message : error);
  }
  process.exitCode = 1;
}
