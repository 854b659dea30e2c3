import type { Knex } from 'knex';

import type { Logger } from '../../http/logger.ts';
import type { OutageNotes } from '../../storage/database.ts';
import { type ClaimedJob, failJob } from './job-queries.ts';
import { claimNextJob, onJobCreated, runJobBatch } from './jobs.ts';

export type JobRunnerOptions = {
  /** How long a claim holds a job without a batch committed; a runner that dies leaves it to others after this. */
  leaseMs: number;
  /** How often to look for jobs created elsewhere (other instances) or left by a runner that died. */
  pollMs: number;
};

export const defaultJobRunnerOptions: JobRunnerOptions = { leaseMs: 60_000, pollMs: 2000 };

/** The job runners of this process (tests find the service's own here). */
export const activeJobRunners = new Set<JobRunner>();

/**
 * Runs recover and replay jobs, one at a time per process, batch after batch. Any number may run
 * against one database: a job is claimed under a lease renewed by each batch, and a batch checks
 * the claim in its own transaction, so a runner whose lease ran out stops at its next batch.
 */
export class JobRunner {
  readonly #db: Knex;
  readonly #logger: Logger;
  readonly #outage: OutageNotes | undefined;
  readonly #options: JobRunnerOptions;
  #running = false;
  #working: Promise<void> | undefined;
  #again = false;
  #timer: NodeJS.Timeout | undefined;
  #unsubscribe: (() => void) | undefined;

  constructor({
    db,
    logger,
    outage,
    options = {},
  }: {
    db: Knex;
    logger: Logger;
    outage?: OutageNotes;
    options?: Partial<JobRunnerOptions>;
  }) {
    this.#db = db;
    this.#logger = logger;
    this.#outage = outage;
    this.#options = { ...defaultJobRunnerOptions, ...options };
  }

  start(): void {
    if (this.#running) {
      return;
    }
    this.#running = true;
    activeJobRunners.add(this);
    this.#unsubscribe = onJobCreated(() => this.wake());
    this.#timer = setInterval(() => this.wake(), this.#options.pollMs);
    this.#timer.unref();
    this.wake();
  }

  /** Stops after the batch under way; the job it held is taken over when its lease ends. */
  async stop(): Promise<void> {
    this.#running = false;
    this.#unsubscribe?.();
    clearInterval(this.#timer);
    await this.#working;
    activeJobRunners.delete(this);
  }

  wake(): void {
    if (!this.#running) {
      return;
    }
    if (this.#working) {
      this.#again = true;
      return;
    }
    this.#working = this.#runJobs().finally(() => {
      this.#working = undefined;
      if (this.#again) {
        this.#again = false;
        this.wake();
      }
    });
  }

  async #runJobs(): Promise<void> {
    try {
      while (this.#running) {
        const claimed = await claimNextJob(this.#db, this.#options.leaseMs);
        if (!claimed) {
          return;
        }
        await this.#run(claimed);
      }
    } catch (error) {
      if (!this.#outage?.noteFailure(error)) {
        this.#logger.error({ err: error }, 'webhook jobs: claiming failed');
      }
    }
  }

  async #run(claimed: ClaimedJob): Promise<void> {
    try {
      while (this.#running) {
        const step = await runJobBatch(this.#db, claimed, this.#options.leaseMs);
        if (step !== 'more') {
          return;
        }
      }
    } catch (error) {
      // A batch that fails after withTransaction's retries will fail again: the job stops, and says so.
      this.#logger.error({ err: error, hookId: claimed.hookId, jobId: claimed.id }, 'webhook job failed');
      await failJob(this.#db, claimed, Date.now());
    }
  }
}
