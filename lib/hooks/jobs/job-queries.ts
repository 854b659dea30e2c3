import type { Knex } from 'knex';

import { locksRows, type Queryable } from '../../storage/database.ts';
import type { Cursor } from '../event-log-queries.ts';

/**
 * Recover and replay jobs, `hook_jobs`: running under a lease (as the dispatcher's claims) until
 * done or failed. A batch advances `cursor_*` and `done` in the transaction that does its work,
 * so a job taken over after a crash resumes where the last committed batch ended.
 */

export type JobKind = 'recover' | 'replay';
export type JobStatus = 'running' | 'done' | 'failed';

export type Job = {
  id: string;
  hookId: string;
  kind: JobKind;
  status: JobStatus;
  since: number;
  until: number;
  total: number;
  done: number;
  /** The last row handled; absent before the first batch. */
  cursor?: Cursor;
};

/** A job claimed by one runner: its batches name `claimId`. */
export type ClaimedJob = Job & { claimId: string };

type JobRow = {
  id: string;
  hook_id: string;
  kind: JobKind;
  status: JobStatus;
  since: number | string;
  until: number | string;
  total: number;
  done: number;
  cursor_at: number | string | null;
  cursor_id: string | null;
};

const columns = ['id', 'hook_id', 'kind', 'status', 'since', 'until', 'total', 'done', 'cursor_at', 'cursor_id'];

const toJob = (row: JobRow): Job => ({
  id: row.id,
  hookId: row.hook_id,
  kind: row.kind,
  status: row.status,
  since: Number(row.since),
  until: Number(row.until),
  total: row.total,
  done: row.done,
  cursor: row.cursor_id === null ? undefined : { at: Number(row.cursor_at), id: row.cursor_id },
});

export async function insertJob(db: Queryable, job: Job, now: number): Promise<void> {
  await db('hook_jobs').insert({
    id: job.id,
    hook_id: job.hookId,
    kind: job.kind,
    status: job.status,
    since: job.since,
    until: job.until,
    total: job.total,
    done: job.done,
    created_at: now,
    updated_at: now,
  });
}

/** The hook's running recover or replay job, if any (the caller holds the hook's row lock). */
export async function findRunningJob(db: Queryable, hookId: string): Promise<Job | undefined> {
  const row = await db('hook_jobs').where({ hook_id: hookId, status: 'running' }).first<JobRow | undefined>(columns);
  return row && toJob(row);
}

export async function findJob(db: Queryable, hookId: string, id: string): Promise<Job | undefined> {
  const row = await db('hook_jobs').where({ id, hook_id: hookId }).first<JobRow | undefined>(columns);
  return row && toJob(row);
}

/**
 * Claims the oldest running job nobody holds (never claimed, or its lease over) until `now +
 * leaseMs`, under `claimId`. On MySQL and PostgreSQL a job another runner is claiming is skipped (SKIP LOCKED).
 */
export async function claimJob(
  trx: Knex.Transaction,
  claimId: string,
  now: number,
  leaseMs: number,
): Promise<ClaimedJob | undefined> {
  const query = trx('hook_jobs')
    .where({ status: 'running' })
    .where((free) => {
      void free.whereNull('lease_until').orWhere('lease_until', '<', now);
    })
    .orderBy('created_at')
    .first<JobRow | undefined>(columns);
  if (locksRows(trx)) {
    query.forUpdate().skipLocked();
  }
  const row = await query;
  if (!row) {
    return undefined;
  }
  await trx('hook_jobs')
    .where({ id: row.id })
    .update({ claim_id: claimId, lease_until: now + leaseMs, updated_at: now });
  return { ...toJob(row), claimId };
}

/** The job, locked until `trx` ends, if it is still running under `claimId` (else another runner took it over). */
export async function lockClaimedJob(trx: Knex.Transaction, claimed: ClaimedJob): Promise<Job | undefined> {
  const row = await trx('hook_jobs')
    .where({ id: claimed.id, claim_id: claimed.claimId, status: 'running' })
    .forUpdate()
    .first<JobRow | undefined>(columns);
  return row && toJob(row);
}

/** A batch's progress: `cursor` the last row handled, its lease renewed; finished, the job is done. */
export async function advanceJob(
  db: Queryable,
  job: Job,
  progress: { cursor?: Cursor; handled: number; finished: boolean; leaseUntil: number; now: number },
): Promise<void> {
  const done = job.done + progress.handled;
  await db('hook_jobs')
    .where({ id: job.id })
    .update({
      done,
      // Once done, the total is what was handled: the count taken at the start is an estimate
      // (rows of the window may have changed meanwhile).
      ...(progress.finished
        ? { status: 'done', total: done, lease_until: null }
        : { lease_until: progress.leaseUntil }),
      ...(progress.cursor ? { cursor_at: progress.cursor.at, cursor_id: progress.cursor.id } : {}),
      updated_at: progress.now,
    });
}

export async function failJob(db: Queryable, claimed: ClaimedJob, now: number): Promise<void> {
  await db('hook_jobs')
    .where({ id: claimed.id, claim_id: claimed.claimId })
    .update({ status: 'failed', lease_until: null, updated_at: now });
}

/** Drops finished jobs last changed before `before` (their progress is of no use any more). */
export async function deleteFinishedJobsBefore(db: Queryable, before: number): Promise<number> {
  return db('hook_jobs').whereIn('status', ['done', 'failed']).where('updated_at', '<', before).delete();
}
