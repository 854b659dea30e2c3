import { execFile } from 'node:child_process';
import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';

import { builtScripts, useBuild } from './support/build.ts';
import { freshDatabaseUrl } from './support/database.ts';

type Run = { code: number; stdout: string; stderr: string };

/** `npm run --silent cli -- <args>` (the build), its exit code and output. */
async function cli(args: string[], env: Record<string, string> = {}): Promise<Run> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [builtScripts.cli, ...args], {
      env: { ...process.env, ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

const commands = ['create-admin', 'rotate-secrets', 'export', 'import'];

describe('npm run cli', () => {
  useBuild();

  it('--help lists the commands; without a command it prints the same and fails', async () => {
    const help = await cli(['--help']);
    expect(help.code).to.equal(0);
    for (const command of commands) {
      expect(help.stdout).to.match(new RegExp(`^  ${command} +\\S`, 'm'));
    }
    const bare = await cli([]);
    expect(bare).to.include({ code: 1, stdout: help.stdout });
  });

  for (const command of commands) {
    it(`${command} --help describes the command without touching a database`, async () => {
      const help = await cli([command, '--help'], {
        DB_URL: 'mysql://nobody@127.0.0.1:1/none',
        DB_CONNECT_TIMEOUT: '0',
      });
      expect(help.code, help.stderr).to.equal(0);
      expect(help.stdout).to.match(new RegExp(`^usage: npm run (--silent )?cli -- ${command}`));
      expect(help.stderr).to.equal('');
    });
  }

  it('refuses an unknown command or option in one line that points to the help', async () => {
    const unknownOption = await cli(['export', '--everything']);
    expect(unknownOption.code).to.equal(1);
    expect(unknownOption.stderr).to.equal("Unknown option '--everything' (see npm run cli -- export --help)\n");
    const unknownCommand = await cli(['backup']);
    expect(unknownCommand.code).to.equal(1);
    expect(unknownCommand.stderr).to.match(/^unknown command backup\n/);
  });

  it('export --out writes a file only its owner can read', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'identity-cli-')), 'config.json');
    const run = await cli(['export', '--out', out], { DB_URL: await freshDatabaseUrl() });
    expect(run.code, run.stderr).to.equal(0);
    expect(run.stdout).to.equal('');
    expect(statSync(out).mode & 0o777).to.equal(0o600);
  });

  it('stops on an unreachable database with the one line start-up prints', async () => {
    const run = await cli(['export'], {
      DB_URL: 'mysql://someone:hunter2-secret@127.0.0.1:1/identity',
      DB_CONNECT_TIMEOUT: '0',
    });
    expect(run.code).to.equal(1);
    expect(run.stderr).to.equal(
      'cannot reach the database at 127.0.0.1:1 (ECONNREFUSED) within 0 s: start it, or correct the host and port in DB_URL (DB_CONNECT_TIMEOUT sets how long start-up waits)\n',
    );
  });
});
