import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { createServer } from 'node:net';
import { expect } from 'chai';
import { got } from 'got';

import { Receiver } from './hooks/receiver.ts';
import { builtScripts, useBuild } from './support/build.ts';
import { freshDatabaseUrl } from './support/database.ts';
import { eventually } from './support/eventually.ts';
import { freePort } from './support/service.ts';

type Started = { child: ChildProcess; output: () => string; exited: Promise<number | null>; url: string };

const running = new Set<ChildProcess>();

/** The build with WORKERS=2 in production, as `npm start` runs it; no bootstrap admin, so one is generated. */
async function startWorkers(env: Record<string, string> = {}, nodeArgs: string[] = []): Promise<Started> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, [...nodeArgs, builtScripts.service], {
    env: {
      ...process.env,
      NODE_ENV: 'production',
      LOG_LEVEL: 'info',
      WORKERS: '2',
      PORT: String(port),
      ENDPOINT: url,
      DB_URL: await freshDatabaseUrl(),
      HOOKS_ALLOW_PRIVATE_TARGETS: 'true',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  running.add(child);
  const exited = once(child, 'exit').then(([code]) => {
    running.delete(child);
    return code as number | null;
  });
  return { child, output: () => output, exited, url };
}

/** The processes a process started, from /proc (Linux). */
function children(pid: number): number[] {
  const list = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
  return list === '' ? [] : list.split(' ').map(Number);
}

/** A connection per request: the cluster hands each new connection to the next worker in turn. */
const fresh = got.extend({
  throwHttpErrors: false,
  retry: { limit: 0 },
  agent: { http: new Agent({ keepAlive: false }) },
});

const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;

async function clientCredentials(url: string, id: string, secret: string, resource: string) {
  return fresh.post(`${url}/oidc/token`, {
    form: { grant_type: 'client_credentials', resource, scope: 'all' },
    headers: { authorization: basic(id, secret) },
    responseType: 'json',
  });
}

describe('WORKERS=2: a primary and two worker processes behind one port (the build)', () => {
  useBuild();
  afterEach(() => {
    for (const child of running) {
      child.kill('SIGKILL');
    }
  });

  it('prints the secrets once, sees each change at every worker, delivers each webhook once, replaces a dead worker and stops on SIGTERM', async () => {
    const service = await startWorkers();
    const started = () => service.output().includes('identity service started');
    await eventually(() => Promise.resolve(started()), 90_000, 'the start line');
    const line = service
      .output()
      .split('\n')
      .find((text) => text.includes('identity service started'))!;
    expect(JSON.parse(line)).to.include({ issuer: `${service.url}/oidc`, workers: 2 });
    expect(service.output().split('identity service started')).to.have.length(2);

    // One primary, two workers.
    const primary = service.child.pid!;
    const workers = children(primary);
    expect(workers).to.have.length(2);
    for (const worker of workers) {
      expect(children(worker)).to.deep.equal([]);
    }

    // The generated credentials and the console's setup token, once each.
    const secrets = service
      .output()
      .split('\n')
      .filter((text) => text.includes('"clientSecret"'));
    expect(secrets).to.have.length(1);
    expect(service.output().match(/"setupToken"/g)).to.have.length(1);
    const admin = JSON.parse(secrets[0]) as { clientId: string; clientSecret: string; resource: string };

    const management = async () => {
      const { body } = await clientCredentials(service.url, admin.clientId, admin.clientSecret, admin.resource);
      return fresh.extend({
        prefixUrl: `${service.url}/api`,
        headers: { authorization: `Bearer ${(body as { access_token: string }).access_token}` },
        responseType: 'json',
      });
    };
    const api = await management();

    // An application made through one worker works at once at both; once deleted, at neither.
    for (let round = 0; round < 3; round++) {
      const { body: created } = await api.post<{ id: string }>('applications', {
        json: { name: `round ${round}`, type: 'MachineToMachine' },
      });
      const { body: secrets } = await api.get<Array<{ name: string; value: string }>>(
        `applications/${created.id}/secrets`,
      );
      const application = { id: created.id, secret: secrets.find(({ name }) => name === 'Default secret')!.value };
      for (let request = 0; request < 6; request++) {
        const answer = await fresh.post(`${service.url}/oidc/token`, {
          form: { grant_type: 'client_credentials' },
          headers: { authorization: basic(application.id, application.secret) },
        });
        expect(answer.statusCode, answer.body).to.equal(200);
      }
      expect((await api.delete(`applications/${application.id}`)).statusCode).to.equal(204);
      for (let request = 0; request < 6; request++) {
        const answer = await fresh.post(`${service.url}/oidc/token`, {
          form: { grant_type: 'client_credentials' },
          headers: { authorization: basic(application.id, application.secret) },
        });
        expect(answer.statusCode, answer.body).to.equal(401);
      }
    }

    // Every worker runs a dispatcher: each event is still delivered once.
    const receiver = await Receiver.start();
    try {
      const hook = await api.post('hooks', {
        json: { name: 'workers', events: ['User.Created'], config: { url: receiver.url } },
      });
      expect(hook.statusCode).to.equal(201);
      const users = 20;
      for (let index = 0; index < users; index++) {
        expect((await api.post('users', { json: { username: `worker_user_${index}` } })).statusCode).to.equal(200);
      }
      await receiver.waitFor(users, 30_000);
      // A later event, delivered after the others were: a duplicate of theirs would have come by then.
      expect((await api.post('users', { json: { username: 'worker_user_last' } })).statusCode).to.equal(200);
      await receiver.waitFor(users + 1, 30_000);
      const created = receiver.requests.map(
        (request) => (JSON.parse(request.body) as { data: { username: string } }).data.username,
      );
      expect(new Set(created).size).to.equal(users + 1);
      expect(receiver.requests).to.have.length(users + 1);
      expect(new Set(receiver.ids).size).to.equal(users + 1);
    } finally {
      await receiver.close();
    }

    // Each worker answers readiness for itself.
    for (let request = 0; request < 4; request++) {
      expect((await fresh.get(`${service.url}/health/ready`)).statusCode).to.equal(200);
    }

    // A worker that dies is replaced, and the service keeps answering.
    process.kill(workers[0], 'SIGKILL');
    await eventually(
      () => Promise.resolve(service.output().includes('a worker stopped unexpectedly')),
      90_000,
      'the dead worker logged',
    );
    await eventually(
      () => Promise.resolve(service.output().includes('"msg":"worker started"') && children(primary).length === 2),
      90_000,
      'a replacement',
    );
    const replaced = children(primary);
    expect(replaced).to.include(workers[1]);
    expect(replaced).to.not.include(workers[0]);
    expect(
      (await clientCredentials(service.url, admin.clientId, admin.clientSecret, admin.resource)).statusCode,
    ).to.equal(200);

    service.child.kill('SIGTERM');
    expect(await service.exited).to.equal(0);
    for (const worker of replaced) {
      expect(existsSync(`/proc/${worker}`), `worker ${worker} still runs`).to.equal(false);
    }
    expect(service.output()).to.not.match(/\n\s+at /);
  });

  it('stops on a port in use with one line, from one process, printing no secrets', async () => {
    const blocker = createServer();
    blocker.listen(0);
    await once(blocker, 'listening');
    const { port } = blocker.address() as { port: number };
    try {
      const service = await startWorkers({ PORT: String(port) });
      expect(await service.exited).to.equal(1);
      const lines = service
        .output()
        .split('\n')
        .filter((text) => text.trim() !== '' && !text.startsWith('oidc-provider WARNING') && !text.startsWith('{'));
      expect(lines).to.deep.equal([`port ${port} is in use: stop what listens there or set PORT to a free port`]);
      expect(service.output()).to.not.match(/clientSecret|setupToken/);
    } finally {
      blocker.close();
    }
  });
  it("in production, WORKERS=1 too is a primary and a worker, the worker with a heap limit, a heap growing factor and glibc's fixed mmap threshold unless the operator set them", async () => {
    const settingsOf = (pid: number) => ({
      args: readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0'),
      env: readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0'),
    });
    const serving = async (service: Started) => {
      await eventually(
        () => Promise.resolve(service.output().includes('identity service started')),
        90_000,
        'the start line',
      );
      const workers = children(service.child.pid!);
      expect(workers).to.have.length(1);
      expect((await fresh.get(`${service.url}/health/ready`)).statusCode).to.equal(200);
      return settingsOf(workers[0]);
    };

    const ours = await startWorkers({ WORKERS: '1', NODE_OPTIONS: '' });
    const chosen = await serving(ours);
    expect(chosen.args).to.include('--max-old-space-size=512');
    expect(chosen.args).to.include('--heap-growing-percent=125');
    expect(chosen.env).to.include('MALLOC_MMAP_THRESHOLD_=131072');
    ours.child.kill('SIGTERM');
    expect(await ours.exited).to.equal(0);

    // V8's growing factor is no option NODE_OPTIONS may carry: an operator gives it to node itself.
    const theirs = await startWorkers(
      { WORKERS: '1', NODE_OPTIONS: '--max-old-space-size=300', MALLOC_MMAP_THRESHOLD_: '65536' },
      ['--heap-growing-percent=50'],
    );
    const kept = await serving(theirs);
    expect(kept.args.filter((arg) => /^--(max-old-space-size|heap-growing-percent)/.test(arg))).to.deep.equal([
      '--heap-growing-percent=50',
    ]);
    expect(kept.env).to.include('NODE_OPTIONS=--max-old-space-size=300');
    expect(kept.env).to.include('MALLOC_MMAP_THRESHOLD_=65536');
    theirs.child.kill('SIGTERM');
    expect(await theirs.exited).to.equal(0);
  });
});
