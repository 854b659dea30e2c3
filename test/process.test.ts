import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';

import { expect } from 'chai';
import { got } from 'got';

import { freshDatabaseUrl } from './support/database.ts';
import { freePort } from './support/service.ts';

/** The service as users run it: `node --import tsx lib/main.ts`, configured by environment. */
function startProcess(env: Record<string, string>): { child: ChildProcess; output: () => string; errors: () => string } {
  const child = spawn(process.execPath, ['--import', 'tsx', 'lib/main.ts'], {
    env: { ...process.env, NODE_ENV: 'production', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let errors = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    errors += chunk.toString();
  });
  return { child, output: () => output, errors: () => errors };
}

async function waitFor(check: () => boolean, what: string, timeout = 20_000): Promise<void> {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > timeout) {
      throw new Error(`timed out waiting for ${what}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('the service process', () => {
  it('prints generated admin credentials once at first start, as one JSON line on stderr, and they work', async () => {
    const dbUrl = await freshDatabaseUrl();
    const port = await freePort();
    const first = startProcess({ DB_URL: dbUrl, PORT: String(port) });
    await waitFor(() => first.output().includes('identity service started'), 'start');
    const line = first
      .errors()
      .split('\n')
      .find((text) => text.includes('"clientSecret"'));
    const { clientId: id, clientSecret: secret, level } = JSON.parse(line ?? '{}') as { clientId?: string; clientSecret?: string; level?: number };
    expect(id).to.be.a('string');
    expect(secret).to.be.a('string');
    expect(level).to.equal(40);
    expect(first.output().split(secret!)).to.have.length(2);

    const token = await got
      .post(`http://127.0.0.1:${port}/oidc/token`, {
        form: { grant_type: 'client_credentials', resource: `http://localhost:${port}/api`, scope: 'all' },
        username: id,
        password: secret,
      })
      .json<{ access_token: string; scope: string }>();
    expect(token.scope).to.equal('all');
    const resources = await got(`http://127.0.0.1:${port}/api/resources`, {
      headers: { authorization: `Bearer ${token.access_token}` },
    });
    expect(resources.statusCode).to.equal(200);

    first.child.kill('SIGTERM');
    await once(first.child, 'exit');

    const second = startProcess({ DB_URL: dbUrl, PORT: String(port) });
    await waitFor(() => second.output().includes('identity service started'), 'restart');
    expect(second.output()).to.not.include(secret!);
    expect(second.output()).to.not.include('clientSecret');
    second.child.kill('SIGTERM');
    await once(second.child, 'exit');
  });

  it('logs one JSON line per request in production and exits 0 on SIGTERM', async () => {
    const { child, output } = startProcess({ DB_URL: await freshDatabaseUrl(), PORT: String(await freePort()) });
    await waitFor(() => output().includes('identity service started'), 'start');
    const port = Number(/"port":(\d+)/.exec(output())?.[1]);
    await got(`http://127.0.0.1:${port}/api/status`);
    await waitFor(() => output().includes('/api/status'), 'request log');
    const line = output()
      .split('\n')
      .find((text) => text.includes('/api/status'))!;
    expect(JSON.parse(line)).to.include({ method: 'GET', path: '/api/status', status: 204 });

    child.kill('SIGTERM');
    const [code] = await once(child, 'exit');
    expect(code).to.equal(0);
  });

  it('refuses to start with a bad setting and names it', async () => {
    const { child, output } = startProcess({ PORT: 'not-a-port' });
    const [code] = await once(child, 'exit');
    expect(code).to.equal(1);
    expect(output()).to.match(/invalid configuration: PORT/);
  });
});
