import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { expect } from 'chai';
import { got } from 'got';

import { builtScripts, production, useBuild } from '../support/build.ts';
import { freshDatabaseUrl } from '../support/database.ts';
import { eventually } from '../support/eventually.ts';
import { freePort } from '../support/service.ts';
import { Receiver } from './receiver.ts';

const admin = { id: 'kill-admin', secret: 'kill-admin-secret-0123456789' };

/** The service as an operator runs it, so that it can be killed outright. */
function start(dbUrl: string, port: number): ChildProcess {
  return spawn(process.execPath, [builtScripts.service], {
    env: {
      ...process.env,
      ...production,
      LOG_LEVEL: 'warn',
      PORT: String(port),
      ENDPOINT: `http://127.0.0.1:${port}`,
      DB_URL: dbUrl,
      BOOTSTRAP_ADMIN_CLIENT_ID: admin.id,
      BOOTSTRAP_ADMIN_CLIENT_SECRET: admin.secret,
      HOOKS_ALLOW_PRIVATE_TARGETS: 'true',
      HOOKS_RETRY_SCHEDULE: '2,0.2,0.2,0.2,0.2',
    },
    stdio: 'ignore',
  });
}

describe('hooks: an event committed before a SIGKILL', () => {
  useBuild();
  it('is delivered by the restarted service', async () => {
    const dbUrl = await freshDatabaseUrl();
    const port = await freePort();
    const receiver = await Receiver.down();
    const base = `http://127.0.0.1:${port}`;
    let service = start(dbUrl, port);
    try {
      const token = await eventually(
        () =>
          got
            .post(`${base}/oidc/token`, {
              form: { grant_type: 'client_credentials', resource: `${base}/api`, scope: 'all' },
              username: admin.id,
              password: admin.secret,
            })
            .json<{ access_token: string }>()
            .then((body) => body.access_token)
            // Refused until the service listens.
            .catch(() => undefined),
        30_000,
        'the first start',
      );
      const api = got.extend({ prefixUrl: `${base}/api`, headers: { authorization: `Bearer ${token}` } });
      const hook = await api
        .post('hooks', { json: { name: 'down for now', events: ['User.Created'], config: { url: receiver.url } } })
        .json<{ id: string }>();
      const user = await api.post('users', { json: { username: 'survivor' } }).json<{ id: string }>();

      // Committed with the user; the receiver is down, so the first attempt failed and the next is
      // two seconds away (not in flight: a delivery in flight would wait for its lease). Kill -9.
      await eventually(
        async () => (await api.get(`hooks/${hook.id}/recent-logs`).json<unknown[]>()).length > 0,
        30_000,
        'the first attempt',
      );
      service.kill('SIGKILL');
      await once(service, 'exit');
      await receiver.listen();

      service = start(dbUrl, port);
      const delivered = await eventually(
        () => receiver.requests.find((request) => JSON.parse(request.body).data?.id === user.id),
        30_000,
        'the delivery after the restart',
      );
      expect(JSON.parse(delivered.body)).to.include({ event: 'User.Created' });
    } finally {
      service.kill('SIGTERM');
      await receiver.close();
    }
  });
});
