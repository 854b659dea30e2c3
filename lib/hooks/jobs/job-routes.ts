import { z } from 'zod';

import type { Api } from '../../http/api/route.ts';
import type { ServiceContext } from '../../http/context.ts';
import { orNotFound, RequestError } from '../../http/errors.ts';
import { entityId, idParams } from '../../shared/entity-id.ts';
import { findHookForUpdate } from '../queries.ts';
import { findJob, findRunningJob, type JobKind } from './job-queries.ts';
import { createJob } from './jobs.ts';

const tag = 'Hooks';

/** Clocks of the caller and the service may differ by this much: a window ending "now" is not refused. */
const clockSkewMs = 60_000;

const instant = z.iso.datetime({ offset: true, message: 'must be an ISO 8601 date-time with a time zone' }).max(40);

/** `{since, until?}`: ISO 8601 instants, `since` not after `until`, neither in the future; `until` defaults to now. */
const windowBody = z
  .strictObject({ since: instant, until: instant.optional() })
  .transform(({ since, until }) => ({
    since: Date.parse(since),
    until: until === undefined ? undefined : Date.parse(until),
  }))
  .superRefine(({ since, until }, check) => {
    const latest = Date.now() + clockSkewMs;
    if (since > latest) {
      check.addIssue({ code: 'custom', path: ['since'], message: 'must not be in the future' });
    }
    if (until !== undefined && until > latest) {
      check.addIssue({ code: 'custom', path: ['until'], message: 'must not be in the future' });
    }
    if (until !== undefined && since > until) {
      check.addIssue({ code: 'custom', path: ['since'], message: 'must not be after until' });
    }
  });

const jobStarted = z.object({ id: z.string(), status: z.enum(['running', 'done', 'failed']) });
const jobSchema = jobStarted.extend({ kind: z.enum(['recover', 'replay']), total: z.number(), done: z.number() });

/**
 * Recover and replay (beyond Logto, as Svix's): each starts a background job on a hook and
 * answers 202 with its id at once; its progress is read at /hooks/:id/jobs/:jobId.
 */
export function hookJobRoutes(api: Api, { db }: ServiceContext): void {
  const start = (kind: JobKind, summary: string) =>
    api.add(
      {
        method: 'post',
        path: `/hooks/:id/${kind}`,
        summary,
        tag,
        params: idParams,
        body: windowBody,
        response: jobStarted,
        status: 202,
        errors: [404, 409, 422],
      },
      async ({ params, body }, _ctx, trx) => {
        const hook = orNotFound(await findHookForUpdate(trx, params.id), 'hook', params.id);
        if (!hook.enabled) {
          throw new RequestError('hook.disabled');
        }
        // One job per hook at a time: each replay sends every event of its window again, so
        // concurrent ones would multiply the deliveries. The hook's row lock orders the checks.
        const running = await findRunningJob(trx, hook.id);
        if (running) {
          throw new RequestError('hook.job_running', { jobId: running.id });
        }
        // The window is fixed now: what happens after the request is not the job's.
        const until = Math.min(body.until ?? Date.now(), Date.now());
        const job = await createJob(trx, hook, kind, { since: body.since, until });
        return { id: job.id, status: job.status };
      },
    );

  start(
    'recover',
    'Queue again every failed delivery of a hook created in [since, until] (until: now), with the same webhook-ids and a fresh retry schedule, as a background job',
  );
  start(
    'replay',
    'Send a hook again every logged event of [since, until] (until: now) it subscribes to, delivered or not, as new deliveries, in a background job',
  );

  api.add(
    {
      method: 'get',
      path: '/hooks/:id/jobs/:jobId',
      summary: 'The progress of a recover or replay job: rows handled (done) of about total',
      tag,
      params: idParams.extend({ jobId: entityId }),
      response: jobSchema,
      errors: [404],
    },
    async ({ params }) => {
      const job = orNotFound(await findJob(db, params.id, params.jobId), 'job', params.jobId);
      return { id: job.id, kind: job.kind, status: job.status, total: job.total, done: job.done };
    },
  );
}
