import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';

import { activeJobRunners } from '../../lib/hooks/jobs/job-runner.ts';
import { claimNextJob, runJobBatch } from '../../lib/hooks/jobs/jobs.ts';
import { eventually } from '../support/eventually.ts';
import { Receiver } from './receiver.ts';
import {
  claimByHand,
  createHook,
  deleteAllHooks,
  deliveryRows,
  type HooksService,
  settleByHand,
  startHooksService,
} from './support.ts';

type JobView = { id: string; kind: string; status: string; total: number; done: number };

const iso = (at: number) => new Date(at).toISOString();

/** Waits for the job to end and returns it. */
async function finishedJob(service: HooksService, hookId: string, jobId: string): Promise<JobView> {
  return eventually(
    async () => {
      const response = await service.api.get(`hooks/${hookId}/jobs/${jobId}`);
      expect(response.statusCode).to.equal(200);
      const job = response.body as JobView;
      return job.status !== 'running' && job;
    },
    15_000,
    `job ${jobId}`,
  );
}

async function startJob(service: HooksService, hookId: string, kind: 'recover' | 'replay', body: object) {
  const response = await service.api.post(`hooks/${hookId}/${kind}`, { json: body });
  expect(response.statusCode, JSON.stringify(response.body)).to.equal(202);
  const started = response.body as { id: string; status: string };
  expect(started.status).to.equal('running');
  return started;
}

const allFinal = async (service: HooksService, hookId: string, status: string) =>
  (await deliveryRows(service, hookId)).every((row) => row.status === status);

describe('hooks: recover and replay', () => {
  let service: HooksService;
  let receiver: Receiver;

  before(async () => {
    // One retry, quickly: an outage leaves failed deliveries within a second.
    service = await startHooksService({ env: { HOOKS_RETRY_SCHEDULE: '0.1' } });
  });
  beforeEach(async () => {
    receiver = await Receiver.start();
  });
  afterEach(async () => {
    await receiver.close();
    await deleteAllHooks(service);
  });
  after(async () => {
    await service.stop();
  });

  it('refuses a bad window with 400 and an unknown hook or job with 404', async () => {
    const hook = await createHook(service, receiver.url);
    const now = Date.now();
    for (const body of [
      {},
      { since: 'yesterday' },
      { since: '2026-01-01' },
      { since: iso(now), until: iso(now - 60_000) },
      { since: iso(now + 86_400_000) },
      { since: iso(now - 60_000), until: iso(now + 365 * 86_400_000) },
      { since: iso(now - 60_000), extra: 1 },
    ]) {
      for (const kind of ['recover', 'replay']) {
        const response = await service.api.post(`hooks/${hook.id}/${kind}`, { json: body });
        expect(response.statusCode, `${kind} ${JSON.stringify(body)}`).to.equal(400);
        expect(response.body.code).to.equal('guard.invalid_input');
      }
    }
    const unknown = await service.api.post('hooks/nosuchhook/recover', { json: { since: iso(now - 60_000) } });
    expect(unknown.statusCode).to.equal(404);
    expect(unknown.body.code).to.equal('entity.not_exists_with_id');
    const noJob = await service.api.get(`hooks/${hook.id}/jobs/nosuchjob`);
    expect(noJob.statusCode).to.equal(404);
  });

  it('recover after an outage re-delivers exactly the failed deliveries, once', async () => {
    const hook = await createHook(service, receiver.url, ['User.Created']);
    const since = Date.now();
    await service.emit('User.Created', { data: { n: 1 } });
    await service.emit('User.Created', { data: { n: 2 } });
    await receiver.waitFor(2);
    await eventually(() => allFinal(service, hook.id, 'succeeded'), 15_000, 'first deliveries');

    await receiver.close();
    for (let n = 3; n <= 6; n++) {
      await service.emit('User.Created', { data: { n } });
    }
    await eventually(
      async () => (await deliveryRows(service, hook.id)).filter((row) => row.status === 'failed').length === 4,
      15_000,
      'failed deliveries',
    );
    const failedIds = (await deliveryRows(service, hook.id))
      .filter((row) => row.status === 'failed')
      .map((row) => row.id);

    // As the console lists them: failed, no next attempt.
    const listed = await service.api.get(`hooks/${hook.id}/deliveries?status=failed`);
    expect(listed.statusCode).to.equal(200);
    expect(listed.headers['total-number']).to.equal('4');
    for (const delivery of listed.body as Array<{ status: string; attempts: number; nextAttemptAt: number | null }>) {
      expect(delivery).to.deep.include({ status: 'failed', attempts: 2, nextAttemptAt: null });
    }

    await receiver.listen();
    const started = await startJob(service, hook.id, 'recover', { since: iso(since) });
    const job = await finishedJob(service, hook.id, started.id);
    expect(job).to.deep.equal({ id: started.id, kind: 'recover', status: 'done', total: 4, done: 4 });
    await eventually(() => allFinal(service, hook.id, 'succeeded'), 15_000, 'recovered deliveries');

    const ids = receiver.ids;
    expect(ids).to.have.length(6);
    expect(new Set(ids).size).to.equal(6);
    expect(ids.slice(2).sort()).to.deep.equal([...failedIds].sort());

    // Nothing is failed any more: a second recover finds nothing.
    const again = await startJob(service, hook.id, 'recover', { since: iso(since) });
    expect(await finishedJob(service, hook.id, again.id)).to.deep.include({ status: 'done', total: 0, done: 0 });
    expect(receiver.requests).to.have.length(6);
  });

  it('replay from a time re-sends every event since that the hook subscribes to', async () => {
    const hook = await createHook(service, receiver.url, ['User.Created', 'User.Deleted']);
    await service.emit('User.Created', { data: { n: 1 } });
    await sleep(5);
    const since = Date.now();
    await sleep(5);
    await service.emit('User.Created', { data: { n: 2 } });
    await service.emit('Role.Created', { data: { n: 3 } });
    await service.emit('User.Deleted', { data: { n: 4 } });
    await service.emit('User.Created', { data: { n: 5 } });
    const first = [...(await receiver.waitFor(4))];
    await eventually(() => allFinal(service, hook.id, 'succeeded'), 15_000, 'first deliveries');
    const originals = first.filter((request) => JSON.parse(request.body).data.n !== 1).map((request) => request.body);

    const started = await startJob(service, hook.id, 'replay', { since: iso(since), until: iso(Date.now()) });
    expect(await finishedJob(service, hook.id, started.id)).to.deep.equal({
      id: started.id,
      kind: 'replay',
      status: 'done',
      total: 3,
      done: 3,
    });
    const all = await receiver.waitFor(7);
    const replayed = all.slice(4);
    // The same payloads (createdAt of the event included), as new deliveries (sent in parallel: in any order).
    expect(replayed.map((request) => request.body).sort()).to.deep.equal(originals.sort());
    const firstIds = new Set(first.map((request) => String(request.headers['webhook-id'])));
    for (const request of replayed) {
      expect(firstIds.has(String(request.headers['webhook-id']))).to.equal(false);
    }
  });

  it('runs one job per hook at a time: 20 concurrent replays make one job, the others 409', async () => {
    const hook = await createHook(service, receiver.url, ['User.Created']);
    const since = Date.now();
    await sleep(5);
    for (let n = 1; n <= 3; n++) {
      await service.emit('User.Created', { data: { n } });
    }
    await receiver.waitFor(3);
    await eventually(() => allFinal(service, hook.id, 'succeeded'), 15_000, 'first deliveries');

    // The runners wait meanwhile: a job finishing between two requests would let the next one start.
    const runners = [...activeJobRunners];
    await Promise.all(runners.map((runner) => runner.stop()));
    const body = { since: iso(since), until: iso(Date.now()) };
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        service.api.post(`hooks/${hook.id}/${index % 2 === 0 ? 'replay' : 'recover'}`, { json: body }),
      ),
    );
    const started = answers.filter((answer) => answer.statusCode === 202);
    expect(started, JSON.stringify(answers.map((answer) => answer.body))).to.have.length(1);
    const refused = answers.filter((answer) => answer.statusCode !== 202);
    expect(new Set(refused.map((answer) => `${answer.statusCode} ${answer.body.code}`))).to.deep.equal(
      new Set(['409 hook.job_running']),
    );
    const job = started[0].body as { id: string };
    expect(refused.every((answer) => answer.body.data?.jobId === job.id)).to.equal(true);
    runners.forEach((runner) => runner.start());
    await finishedJob(service, hook.id, job.id);
    await sleep(500);
    // A replay sends the 3 events once more; a recover finds nothing failed.
    const expected = answers.indexOf(started[0]) % 2 === 0 ? 6 : 3;
    expect(receiver.requests.length).to.equal(expected);
    // Once it is done, the next one may start.
    await startJob(service, hook.id, 'replay', body);
  });

  it('refuses a job on a disabled hook', async () => {
    const hook = await createHook(service, receiver.url, ['User.Created'], { enabled: false });
    const response = await service.api.post(`hooks/${hook.id}/replay`, { json: { since: iso(Date.now() - 1000) } });
    expect(response.statusCode).to.equal(422);
    expect(response.body.code).to.equal('hook.disabled');
  });
});

describe('hooks: a recover job run by two instances', () => {
  let service: HooksService;

  before(async () => {
    service = await startHooksService({ env: { HOOKS_RETRY_SCHEDULE: '0.1' } });
  });
  after(async () => {
    await service.stop();
  });

  it('re-queues each delivery once, whoever runs each batch', async () => {
    const receiver = await Receiver.down();
    const hook = await createHook(service, receiver.url, ['Role.Created']);
    const since = Date.now();
    for (let n = 1; n <= 5; n++) {
      await service.emit('Role.Created', { data: { n } });
    }
    await eventually(() => allFinal(service, hook.id, 'failed'), 15_000, 'failed deliveries');
    // From here the batches are run by hand, as two instances would.
    await service.dispatcher.stop();
    await Promise.all([...activeJobRunners].map((runner) => runner.stop()));

    const started = await startJob(service, hook.id, 'recover', { since: iso(since) });
    const now = Date.now();
    const first = (await claimNextJob(service.db, 1000, now))!;
    expect(first.id).to.equal(started.id);
    expect(await runJobBatch(service.db, first, 1000, 2)).to.equal('more');
    // The two re-queued fail again before the job goes on.
    const retried = await claimByHand(service, hook.id, 5, Date.now());
    expect(retried).to.have.length(2);
    await settleByHand(retried, 400, Date.now(), service);

    // The first instance's lease runs out: a second takes the job over, the first is shut out.
    const second = (await claimNextJob(service.db, 1000, now + 60_000))!;
    expect(second.id).to.equal(started.id);
    expect(second.claimId).to.not.equal(first.claimId);
    expect(await runJobBatch(service.db, first, 1000, 2)).to.equal('lost');
    expect(await runJobBatch(service.db, second, 1000, 2)).to.equal('more');
    expect(await runJobBatch(service.db, second, 1000, 2)).to.equal('finished');
    expect(await claimNextJob(service.db, 1000, now + 600_000)).to.equal(undefined);

    const rows = await deliveryRows(service, hook.id);
    const twice = new Set(retried.map(({ id }) => id));
    for (const row of rows) {
      expect(row.status, row.id).to.equal(twice.has(row.id) ? 'failed' : 'pending');
    }
    const job = await service.api.get(`hooks/${hook.id}/jobs/${started.id}`);
    expect(job.body).to.deep.equal({ id: started.id, kind: 'recover', status: 'done', total: 5, done: 5 });
  });
});
