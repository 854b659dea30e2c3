import { Writable } from 'node:stream';
import { createInterface } from 'node:readline/promises';
import { parseArgs } from 'node:util';

import { loadConfig } from '../config/env.ts';
import { RequestError } from '../http/errors.ts';
import { openDatabase } from '../storage/database.ts';
import { migrateToLatest } from '../storage/migrate.ts';
import { SharedCache } from '../storage/shared-cache.ts';
import { createAdministrator } from './administrators.ts';
import { rotateSecrets } from './rotate-secrets.ts';

const usage = [
  'usage: npm run cli -- create-admin [--username <name>] [--password <password>] (missing values are asked for)',
  '       npm run cli -- rotate-secrets (re-encrypts stored secrets with SECRETS_ENCRYPTION_KEY)',
].join('\n');

const commands = new Map<string, (args: string[]) => Promise<void>>([
  ['create-admin', createAdmin],
  ['rotate-secrets', rotateSecrets],
]);

/**
 * Asks for what the arguments left out, on one prompt (stdin may be a pipe holding both answers).
 * The password is not echoed: while it is typed, the prompt's output is dropped.
 */
async function askMissing(given: { username?: string; password?: string }): Promise<{ username: string; password: string }> {
  let muted = false;
  const output = new Writable({
    write(chunk, _encoding, done) {
      if (!muted) {
        process.stdout.write(chunk);
      }
      done();
    },
  });
  const prompt = createInterface({ input: process.stdin, output, terminal: Boolean(process.stdin.isTTY) });
  // The iterator keeps lines that arrive before they are asked for (a pipe delivers both at once).
  const lines = prompt[Symbol.asyncIterator]();
  const answer = async (question: string) => {
    process.stdout.write(question);
    const { value } = await lines.next();
    return String(value ?? '');
  };
  try {
    const username = given.username ?? (await answer('Username: ')).trim();
    let password = given.password;
    if (password === undefined) {
      muted = true;
      password = await answer('Password: ');
      muted = false;
      process.stdout.write('\n');
    }
    return { username, password };
  } finally {
    prompt.close();
  }
}

/**
 * `create-admin`: a user holding the console administrator role, made from a terminal. Unlike the
 * console's first run it works when administrators exist already (whoever runs it holds the
 * database): the way back in when every administrator is locked out.
 */
async function createAdmin(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { username: { type: 'string' }, password: { type: 'string' } } });
  const { username, password } = values.username !== undefined && values.password !== undefined ? { username: values.username, password: values.password } : await askMissing(values);
  const config = loadConfig();
  const db = openDatabase(config.dbUrl, config.secretKeys);
  try {
    await migrateToLatest(db);
    const user = await createAdministrator(db, new SharedCache(db), { username, password }, {});
    console.log(`Created administrator ${username} (user id ${user.id}). Sign in at ${config.endpoint}/console`);
  } finally {
    await db.destroy();
  }
}

const [command, ...rest] = process.argv.slice(2);
try {
  const run = commands.get(command ?? '');
  if (!run) {
    throw new Error(usage);
  }
  await run(rest);
} catch (error) {
  if (error instanceof RequestError) {
    const issues = (error.data as { issues?: Array<{ code: string }> } | undefined)?.issues;
    console.error(`${error.message}${issues ? ` (${issues.map((issue) => issue.code).join(', ')})` : ''}`);
  } else {
    console.error(error instanceof Error ? error.message : error);
  }
  process.exitCode = 1;
}
