/**
 * `npm run test:galera`: the service on a throwaway 3-node Galera cluster (test/support/galera.ts),
 * two instances on two nodes sharing one database and one ENDPOINT. Not part of `npm test`: it
 * starts three MariaDB servers of its own. Skipped, with the reason, where Galera is not installed.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';

import { Receiver } from '../hooks/receiver.ts';
import { eventually } from '../support/eventually.ts';
import { expectAllOk } from '../support/expect.ts';
import { GaleraCluster, galeraMissing } from '../support/galera.ts';
import { freePort, startService, type TestService } from '../support/service.ts';
import { ifSet, unique } from '../support/values.ts';

const missing = galeraMissing();
if (missing) {
  console.log(`\nGalera tests skipped: ${missing}`);
}

/** Starts `count` requests at once, the even ones through the first instance, the odd ones through the second. */
const split = <T>(count: number, request: (through: TestService, index: number) => Promise<T>): Promise<T[]> =>
  Promise.all(Array.from({ length: count }, (_, index) => request(index % 2 === 0 ? first : second, index)));

/** Each event's deliveries to `receiver` by the id of the entity it is about. */
const deliveredIds = (receiver: Receiver, event: string) =>
  receiver.requests
    .map((request) => JSON.parse(request.body) as { event: string; data?: { id?: string } })
    .filter((payload) => payload.event === event)
    .map((payload) => String(payload.data?.id));

let cluster: GaleraCluster;
let first: TestService;
let second: TestService;
let receiver: Receiver;
const figures: Record<string, number | string> = {};

(missing ? describe.skip : describe)('on a 3-node Galera cluster, two instances on two nodes', function () {
  this.timeout(300_000);

  before(async () => {
    const started = Date.now();
    cluster = await GaleraCluster.start(3);
    figures.clusterStartSeconds = (Date.now() - started) / 1000;
    await cluster.createDatabase('identity');
    // One public ENDPOINT, as behind a load balancer: tokens of one instance are the other's.
    const endpoint = `http://127.0.0.1:${await freePort()}`;
    const env = {
      ENDPOINT: endpoint,
      HOOKS_RETRY_SCHEDULE: '0.2,0.5,1,2',
      CLIENT_AUTH_FAILURE_WINDOW: '60',
      CLIENT_AUTH_FAILURES_PER_CLIENT: '6',
    };
    first = await startService({ dbUrl: cluster.url(0, 'identity'), env, logs: true });
    second = await startService({ dbUrl: cluster.url(1, 'identity'), env, logs: true });
    receiver = await Receiver.start();
  });

  after(async () => {
    // What both instances logged, for a failure's cause (each 500's logId is in its line).
    if (process.env.GALERA_LOGS) {
      for (const [name, service] of [
        ['first', first],
        ['second', second],
      ] as const) {
        writeFileSync(join(process.env.GALERA_LOGS, `${name}.log`), ifSet(service)?.logs() ?? '');
      }
    }
    await ifSet(first)?.stop();
    await ifSet(second)?.stop();
    await ifSet(receiver)?.close();
    await ifSet(cluster)?.stop();
    console.log(`\nGalera figures: ${JSON.stringify(figures)}`);
  });

  it('has a primary key on every table the migrations made (Galera replicates rows by it)', async () => {
    const withoutKey = await cluster.query<{ name: string }>(
      0,
      `select t.table_name as name from information_schema.tables t
        where t.table_schema = ? and t.table_type = 'BASE TABLE' and not exists (
          select 1 from information_schema.table_constraints c
           where c.table_schema = t.table_schema and c.table_name = t.table_name and c.constraint_type = 'PRIMARY KEY')`,
      ['identity'],
    );
    expect(withoutKey.map((row) => row.name)).to.deep.equal([]);
  });

  it('40 concurrent custom-data merges of one user, split across both, keep all 40 keys', async () => {
    const user = await first.api.post('users', { json: { username: unique('merge') } });
    expectAllOk([user]);
    expectAllOk(
      await split(40, (service, index) =>
        service.api.patch(`users/${user.body.id}/custom-data`, { json: { customData: { [`key${index}`]: index } } }),
      ),
    );
    const expected = Object.fromEntries(Array.from({ length: 40 }, (_, index) => [`key${index}`, index]));
    for (const node of [0, 1, 2]) {
      const [row] = await cluster.query<{ custom_data: string }>(
        node,
        'select custom_data from identity.users where id = ?',
        [user.body.id],
      );
      expect(JSON.parse(row.custom_data), `stored, read through node ${node}`).to.deep.equal(expected);
    }
    for (const [name, service] of [
      ['first', first],
      ['second', second],
    ] as const) {
      const { body } = await service.api.get(`users/${user.body.id}/custom-data`);
      expect(body, `through the ${name} instance`).to.deep.equal(expected);
    }
  });

  it('30 concurrent role grants to one user, split across both, all hold', async () => {
    const user = await first.api.post('users', { json: { username: unique('grants') } });
    const roles = await split(30, (service, index) =>
      service.api.post('roles', { json: { name: unique(`role${index}`), description: 'granted' } }),
    );
    expectAllOk(roles);
    expectAllOk(
      await split(30, (service, index) =>
        service.api.post(`users/${user.body.id}/roles`, { json: { roleIds: [roles[index].body.id] } }),
      ),
    );
    for (const service of [first, second]) {
      const held = await service.api.get(`users/${user.body.id}/roles`, { searchParams: { page_size: 100 } });
      expect(held.body.map((role: { id: string }) => role.id).sort()).to.deep.equal(
        roles.map((role) => role.body.id).sort(),
      );
    }
  });

  it('30 concurrent membership changes of one organization, split across both, keep every member', async () => {
    const organization = await second.api.post('organizations', { json: { name: unique('org') } });
    const users = await split(30, (service) => service.api.post('users', { json: { username: unique('member') } }));
    expectAllOk([organization, ...users]);
    expectAllOk(
      await split(30, (service, index) =>
        service.api.post(`organizations/${organization.body.id}/users`, { json: { userIds: [users[index].body.id] } }),
      ),
    );
    for (const service of [first, second]) {
      const members = await service.api.get(`organizations/${organization.body.id}/users`, {
        searchParams: { page_size: 100 },
      });
      expect(members.body.map((member: { id: string }) => member.id).sort()).to.deep.equal(
        users.map((user) => user.body.id).sort(),
      );
    }
  });

  it('delivers a webhook exactly once per event, whichever instance wrote it and whichever sends it', async () => {
    const hook = await first.api.post('hooks', {
      json: { name: 'galera', events: ['User.Created'], config: { url: receiver.url } },
    });
    expectAllOk([hook]);
    const users = await split(100, (service) => service.api.post('users', { json: { username: unique('hooked') } }));
    expectAllOk(users);
    const ids = users.map((user) => String(user.body.id)).sort();
    await eventually(() => deliveredIds(receiver, 'User.Created').length >= 100, 60_000, '100 deliveries');
    await sleep(2000);
    expect(deliveredIds(receiver, 'User.Created').sort()).to.deep.equal(ids);
  });

  it('counts failed client authentications and message sends across both nodes', async () => {
    const application = await first.api.post('applications', {
      json: { name: unique('machine'), type: 'MachineToMachine' },
    });
    expectAllOk([application]);
    const wrong = (service: TestService) =>
      service.token(application.body.id, 'wrong-secret-0123456789', { grant_type: 'client_credentials' });
    // Six failures allowed per client in the window, three through each instance: the next is refused on both.
    const failures = await split(6, (service) => wrong(service));
    expect(failures.map((failure) => failure.statusCode)).to.deep.equal(Array(6).fill(401));
    expect((await wrong(first)).statusCode).to.equal(429);
    expect((await wrong(second)).statusCode).to.equal(429);

    // Ten codes per recipient in ten minutes, alternately through each instance: the eleventh is refused on both.
    const email = `${unique('limit')}@example.com`;
    for (let sent = 0; sent < 10; sent++) {
      const response = await (sent % 2 === 0 ? first : second).api.post('verification-codes', { json: { email } });
      expect(response.statusCode, JSON.stringify(response.body)).to.equal(204);
    }
    for (const service of [first, second]) {
      const refused = await service.api.post('verification-codes', { json: { email } });
      expect(refused.statusCode).to.equal(429);
      expect(refused.body.code).to.equal('request.message_rate_limited');
    }
  });

  it('loses a node mid-stream: every write answered 2xx is kept, its instance answers JSON 503 until the node is back, no event is lost', async () => {
    receiver.requests.length = 0;
    const created: string[] = [];
    const answers = new Map<number, number>();
    let writing = true;
    /** Four writers at a time, alternately through each instance, until told to stop. */
    const writer = async (lane: number) => {
      for (let index = lane; writing; index += 4) {
        const through = index % 2 === 0 ? first : second;
        const response = await through.api.post('users', { json: { username: unique('stream') } });
        answers.set(response.statusCode, (answers.get(response.statusCode) ?? 0) + 1);
        if (response.statusCode >= 200 && response.statusCode < 300) {
          created.push(String(response.body.id));
        } else {
          expect(response.statusCode, JSON.stringify(response.body)).to.equal(503);
          expect(response.body.code).to.equal('database.unavailable');
          expect(response.headers['retry-after']).to.match(/^\d+$/);
        }
        await sleep(10);
      }
    };
    const writers = [0, 1, 2, 3].map(writer);
    await sleep(1500);

    const killedAt = Date.now();
    await cluster.kill(1);
    await eventually(
      async () => (await second.http.get('health/ready')).statusCode === 503,
      30_000,
      'the instance on the dead node not ready',
    );
    figures.notReadyAfterKillSeconds = (Date.now() - killedAt) / 1000;
    const refused = await second.api.get('users');
    expect(refused.statusCode).to.equal(503);
    expect(refused.body).to.deep.include({ code: 'database.unavailable' });
    expect(refused.headers['content-type']).to.match(/^application\/json/);
    expect((await second.http.get('health/ready')).body).to.include({ reason: 'database_unavailable' });
    // The surviving instance serves on.
    expect((await first.api.get('users')).statusCode).to.equal(200);
    await sleep(2000);

    const restartedAt = Date.now();
    await cluster.restart(1);
    const rejoinSeconds = (Date.now() - restartedAt) / 1000;
    figures.nodeRejoinSeconds = rejoinSeconds;
    await eventually(
      async () => (await second.http.get('health/ready')).statusCode === 200,
      30_000,
      'the instance on the node back ready',
    );
    figures.readyAfterRejoinSeconds = (Date.now() - restartedAt) / 1000 - rejoinSeconds;
    await sleep(1500);
    writing = false;
    await Promise.all(writers);
    figures.streamAnswers = JSON.stringify(Object.fromEntries(answers));
    figures.streamWritesKept = created.length;

    expect((await second.api.get('users', { searchParams: { page_size: 1 } })).statusCode).to.equal(200);
    // Every write answered 2xx is there, seen through either node.
    for (const service of [first, second]) {
      const missing: string[] = [];
      for (const id of created) {
        if ((await service.api.get(`users/${id}`)).statusCode !== 200) {
          missing.push(id);
        }
      }
      expect(missing, `missing through ${service === first ? 'node 0' : 'node 1'}`).to.deep.equal([]);
    }
    // And each of them made one event, delivered at least once (docs/contract.md): a delivery whose
    // result was being written to the node that died is sent again, as the same delivery (webhook-id).
    await eventually(
      () => new Set(deliveredIds(receiver, 'User.Created')).size >= created.length,
      60_000,
      'every delivery',
    );
    await sleep(2000);
    expect([...new Set(deliveredIds(receiver, 'User.Created'))].sort()).to.deep.equal([...created].sort());
    const deliveriesOf = new Map<string, Set<string>>();
    for (const request of receiver.requests) {
      const payload = JSON.parse(request.body) as { event: string; data?: { id?: string } };
      if (payload.event === 'User.Created') {
        const entity = String(payload.data?.id);
        deliveriesOf.set(entity, (deliveriesOf.get(entity) ?? new Set()).add(String(request.headers['webhook-id'])));
      }
    }
    expect([...deliveriesOf].filter(([, webhookIds]) => webhookIds.size > 1)).to.deep.equal([]);
    // Never a 500 through the loss.
    expect([...answers.keys()].filter((status) => status >= 500 && status !== 503)).to.deep.equal([]);
  });
});
