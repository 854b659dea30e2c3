/**
 * `npm run cli -- <command>`: what an operator does from a shell holding the database's credentials
 * (the same environment as the service: DB_URL, SECRETS_ENCRYPTION_KEY, ENDPOINT).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline/promises';
import { Writable } from 'node:stream';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { Knex } from 'knex';

import { type Config, ConfigError, loadConfig } from './config/env.ts';
import { exportConfiguration } from './config-transfer/export.ts';
import { configFileProblems, importConfiguration, parseConfigFile } from './config-transfer/import.ts';
import { createAdministrator } from './console/administrators.ts';
import { consoleUrl } from './console/console-app.ts';
import { rotateSecrets } from './console/rotate-secrets.ts';
import { outboxEffects } from './hooks/effects.ts';
import { RequestError } from './http/errors.ts';
import { pwnedPasswordLookup, type WarnLog } from './sign-in-experience/pwned-passwords.ts';
import { connectDatabase } from './storage/database.ts';
import { migrateToLatest } from './storage/migrate.ts';
import { checkSecretKeys } from './storage/sealed-columns.ts';
import { SharedCache } from './storage/shared-cache.ts';
import { withTransaction } from './storage/transaction.ts';

type Command = { summary: string; help: string; run: (args: string[]) => Promise<void> };

const helpOption = { help: { type: 'boolean', short: 'h' } } as const;

const commands: Record<string, Command> = {
  'create-admin': {
    summary: 'make a user holding the console administrator role',
    help: `usage: npm run cli -- create-admin [--username <name>] [--password <password>]

Makes a user holding the console administrator role, also when administrators exist already (the way
back in when every one is locked out). What the options leave out is asked for (the password
without echo; stdin may be a pipe holding both answers).

  --username <name>      the new user's username
  --password <password>  their password (it must meet the sign-in experience's password policy)`,
    run: createAdmin,
  },
  'rotate-secrets': {
    summary: 're-encrypt stored secrets with SECRETS_ENCRYPTION_KEY',
    help: `usage: npm run cli -- rotate-secrets

Re-encrypts every stored secret with SECRETS_ENCRYPTION_KEY, opening older ones with
SECRETS_ENCRYPTION_OLD_KEYS; then the old keys can leave the environment. Run it once every instance
runs with the new key; it is safe to run again, and beside running instances.
See docs/secrets-at-rest.md.`,
    run: rotateSecretsCommand,
  },
  export: {
    summary: 'write the configuration (not users) as JSON',
    help: `usage: npm run --silent cli -- export [--out <file>] [--with-secrets]

Writes the configuration as JSON: API resources and their scopes, roles (with their scopes),
applications (with their roles), organization scopes and roles, SSO and social connectors,
organizations (member applications, just-in-time provisioning), webhooks and the sign-in experience.
Users, sessions, tokens, logs and signing keys are not part of it. Built-in rows (the management
API, the console's application and roles) and BOOTSTRAP_ADMIN_CLIENT_ID's application are left
out: every database has them. The same database exports the same bytes. See docs/config-transfer.md.

  --out <file>      write to this file (created readable by its owner only) instead of stdout
  --with-secrets    include application secrets, webhook signing keys and connector client
                    secrets, decrypted (left out otherwise); keep such a file as you keep the keys`,
    run: exportCommand,
  },
  import: {
    summary: 'apply a file written by export: create or update by id, in one transaction',
    help: `usage: npm run cli -- import <file>    (- reads stdin)

Applies a file written by \`export\`: every entry is created or updated by its id, and its lists (a
resource's scopes, a role's scopes, an application's roles, an organization's member applications
and just-in-time settings) become the file's; entries the file does not name are left as they are.
One transaction: a file with any problem (its shape, an id it refers to that is nowhere, a name
another row has) changes nothing, and every problem is listed. Secrets the file holds are stored
encrypted with SECRETS_ENCRYPTION_KEY; without them, an existing entry keeps its secret and a new
application or webhook gets a generated one. No webhook events are sent.`,
    run: importCommand,
  },
};

const usage = `usage: npm run cli -- <command> [options]

commands:
${Object.entries(commands)
  .map(([name, command]) => `  ${name.padEnd(16)}${command.summary}`)
  .join('\n')}

\`npm run cli -- <command> --help\` describes one. The database is DB_URL's, as for \`npm start\`.`;

/** The command's options, or undefined when it was asked for its help (printed here). */
function options<const T extends ParseArgsConfig>(name: string, args: string[], config: T) {
  const parsed = parseArgs({ ...config, args, options: { ...config.options, ...helpOption }, strict: true });
  if ((parsed.values as { help?: boolean }).help) {
    console.log(commands[name].help);
    return undefined;
  }
  return parsed;
}

/** Warnings for the operator running a command: one line on stderr, with the fields it names. */
const cliWarnings: WarnLog = {
  warn: (fields, message) => console.error(`warning: ${message} ${JSON.stringify(fields)}`),
};

/** The database, reachable and up to date; closed when `work` ends. */
async function withDatabase<T>(work: (db: Knex, config: Config) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const db = await connectDatabase(config, (reason) =>
    console.error(`database not reachable yet (${reason}), retrying`),
  );
  try {
    await migrateToLatest(db);
    return await work(db, config);
  } finally {
    await db.destroy();
  }
}

/**
 * Asks for what the arguments left out, on one prompt (stdin may be a pipe holding both answers).
 * The password is not echoed: while it is typed, the prompt's output is dropped.
 */
async function askMissing(given: {
  username?: string;
  password?: string;
}): Promise<{ username: string; password: string }> {
  let muted = false;
  const output = new Writable({
    write(chunk: Buffer, _encoding, done) {
      if (!muted) {
        process.stdout.write(chunk);
      }
      done();
    },
  });
  // Node's type says boolean, but a pipe's stdin has no isTTY at all.
  const stdinIsTTY = (process.stdin as { isTTY?: boolean }).isTTY === true;
  const prompt = createInterface({ input: process.stdin, output, terminal: stdinIsTTY });
  // The iterator keeps lines that arrive before they are asked for (a pipe delivers both at once).
  const lines: AsyncIterator<string, undefined> = prompt[Symbol.asyncIterator]();
  const answer = async (question: string) => {
    process.stdout.write(question);
    const line = await lines.next();
    return line.done ? '' : line.value;
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

async function createAdmin(args: string[]): Promise<void> {
  const parsed = options('create-admin', args, {
    options: { username: { type: 'string' }, password: { type: 'string' } },
  });
  if (!parsed) {
    return;
  }
  const given = parsed.values;
  const { username, password } =
    given.username !== undefined && given.password !== undefined
      ? { username: given.username, password: given.password }
      : await askMissing(given);
  await withDatabase(async (db, config) => {
    const cache = new SharedCache(db);
    // No request caused it: its User.Created carries `data` only.
    const user = await withTransaction(db, (trx) =>
      createAdministrator(
        trx,
        cache,
        { username, password },
        // The warning of a failed breached-password lookup goes to the operator running the command.
        { effects: outboxEffects(trx, cache), isPwned: pwnedPasswordLookup(config.pwnedPasswordsUrl, cliWarnings) },
      ),
    );
    console.log(`Created administrator ${username} (user id ${user.id}). Sign in at ${consoleUrl(config.endpoint)}`);
  });
}

async function rotateSecretsCommand(args: string[]): Promise<void> {
  if (options('rotate-secrets', args, { options: {} })) {
    console.log(await withDatabase((db) => rotateSecrets(db)));
  }
}

async function exportCommand(args: string[]): Promise<void> {
  const parsed = options('export', args, { options: { out: { type: 'string' }, 'with-secrets': { type: 'boolean' } } });
  if (!parsed) {
    return;
  }
  const { out, 'with-secrets': withSecrets = false } = parsed.values;
  const file = await withDatabase(async (db, config) => {
    await checkSecretKeys(db);
    return exportConfiguration(db, { withSecrets, bootstrapAdminId: config.bootstrapAdmin?.clientId });
  });
  // A database holding what the API would not let in today (an older version's data) still exports; the operator hears what will not import.
  for (const problem of configFileProblems(file)) {
    console.error(`warning: this file will not import as it is: ${problem}`);
  }
  const text = `${JSON.stringify(file, null, 2)}\n`;
  if (out === undefined) {
    process.stdout.write(text);
  } else {
    writeFileSync(out, text, { mode: 0o600 });
    console.error(`Wrote ${out}${withSecrets ? ' (with secrets)' : ''}.`);
  }
}

async function importCommand(args: string[]): Promise<void> {
  const parsed = options('import', args, { options: {}, allowPositionals: true });
  if (!parsed) {
    return;
  }
  const path = parsed.positionals.at(0);
  if (path === undefined || parsed.positionals.length > 1) {
    throw new ConfigError(`name one file to import\n\n${commands.import.help}`);
  }
  const source = path === '-' ? 'stdin' : path;
  const file = parseConfigFile(readFileSync(path === '-' ? 0 : path, 'utf8'), source);
  const report = await withDatabase(async (db, config) => {
    await checkSecretKeys(db);
    return importConfiguration(db, file, source, {
      hooksAllowPrivateTargets: config.hooksAllowPrivateTargets,
      issuer: config.issuer,
    });
  });
  console.log(`Imported ${source}: ${report.created} created, ${report.updated} updated.`);
  for (const note of report.notes) {
    console.log(`  ${note}`);
  }
}

const name = process.argv.at(2);
try {
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    console.log(usage);
    if (name === undefined) {
      process.exitCode = 1;
    }
  } else {
    // Only the commands' own names: `toString` and the like are not commands.
    const command = Object.hasOwn(commands, name) ? commands[name] : undefined;
    if (!command) {
      throw new ConfigError(`unknown command ${name}\n\n${usage}`);
    }
    await command.run(process.argv.slice(3));
  }
} catch (error) {
  if (error instanceof RequestError) {
    const issues = (error.data as { issues?: Array<{ code: string }> } | undefined)?.issues;
    console.error(`${error.message}${issues ? ` (${issues.map((issue) => issue.code).join(', ')})` : ''}`);
  } else if ((error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
    // parseArgs explains itself in a first sentence, then suggests `--`, which is no help here.
    console.error(`${(error as Error).message.split('. ')[0]} (see npm run cli -- ${name} --help)`);
  } else {
    // The commands' failures are the operator's to fix (configuration, a file, a password policy): their message is the report.
    console.error(error instanceof Error ? error.message : String(error));
  }
  process.exitCode = 1;
}
