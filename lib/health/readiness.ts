import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Knex } from 'knex';

import type { Logger } from '../http/logger.ts';
import { sqliteFile } from '../storage/database.ts';
import { latestMigration } from '../storage/migrate.ts';
import type { DatabaseOutage } from './outage.ts';

export type NotReadyReason = 'starting' | 'shutting_down' | 'database_unavailable' | 'migrations_pending';

export type Readiness = { ready: true } | { ready: false; reason: NotReadyReason; message: string };

/** Longer than a healthy database ever takes, shorter than a probe's timeout should be (3 s in docs/operations.md). */
const answerWithinMs = 2000;

const ready: Readiness = { ready: true };
const notReady = (reason: NotReadyReason, message: string): Readiness => ({ ready: false, reason, message });

type FileIdentity = { dev: number; ino: number };

/** A check's answer, and for the log what made it fail. */
type Probe = { readiness: Readiness; cause?: unknown };

/**
 * Whether this instance should get traffic: it is not shutting down, its database answers, and the
 * database has every migration this code knows (a newer one is fine: migrations stay backward
 * compatible for a release). One indexed read of `knex_migrations`; on SQLite also a stat of the
 * file, as a removed or replaced file still answers through the handle held open on it while
 * writes go nowhere anyone will read. Probes arriving together share one check, so a flood of
 * them costs the database one query at a time.
 */
export class ReadinessCheck {
  // Until the steps that follow binding the port (the bootstrap administrator) are done, a request
  // could find what start-up is still making missing: not ready yet.
  #starting = true;
  #draining = false;
  #running: Promise<Probe> | undefined;
  #lastReason: NotReadyReason | undefined;
  /** The last change was the outage's, which logs it and the database's return (outage.ts). */
  #lastByOutage = false;

  private readonly db: Knex;
  private readonly logger: Logger;
  private readonly outage: DatabaseOutage;
  private readonly migration: string | undefined;
  private readonly file: { path: string; identity: FileIdentity } | undefined;

  private constructor(
    db: Knex,
    logger: Logger,
    outage: DatabaseOutage,
    migration: string | undefined,
    file: { path: string; identity: FileIdentity } | undefined,
  ) {
    this.db = db;
    this.logger = logger;
    this.outage = outage;
    this.migration = migration;
    this.file = file;
  }

  /** After the migrations ran: the newest one this code has, and which file the database is. */
  static async create(db: Knex, dbUrl: string, logger: Logger, outage: DatabaseOutage): Promise<ReadinessCheck> {
    const filename = sqliteFile(dbUrl);
    const path = filename === undefined || filename === ':memory:' ? undefined : resolve(filename);
    const file = path === undefined ? undefined : { path, identity: await stat(path) };
    return new ReadinessCheck(db, logger, outage, await latestMigration(), file);
  }

  /** Start-up is complete: from now on ready whenever the database is. */
  started(): void {
    this.#starting = false;
  }

  /** From now on not ready: the load balancer stops sending requests while those in flight finish. */
  drain(): void {
    this.#draining = true;
  }

  async check(): Promise<Readiness> {
    if (this.#draining) {
      return notReady('shutting_down', 'The service is shutting down.');
    }
    if (this.#starting) {
      return notReady('starting', 'The service is starting.');
    }
    this.#running ??= this.#probe().finally(() => (this.#running = undefined));
    const timer = new AbortController();
    const probe = await Promise.race([
      this.#running,
      sleep(answerWithinMs, undefined, { signal: timer.signal }).then(
        (): Probe => ({
          readiness: notReady('database_unavailable', `The database did not answer within ${answerWithinMs / 1000} s.`),
        }),
        (): Probe => ({ readiness: ready }),
      ),
    ]);
    timer.abort();
    this.#noteChange(probe);
    return probe.readiness;
  }

  async #probe(): Promise<Probe> {
    const probe = await this.#probeDatabase();
    if (probe.cause === undefined) {
      this.outage.noteAnswer();
    } else {
      this.outage.noteFailure(probe.cause);
    }
    return probe;
  }

  async #probeDatabase(): Promise<Probe> {
    try {
      if (this.file && !(await sameFile(this.file.path, this.file.identity))) {
        return {
          readiness: notReady(
            'database_unavailable',
            'The database file was removed or replaced: restart the service.',
          ),
          cause: new Error(
            `the database file ${this.file.path} was removed or replaced while the service holds the old one open`,
          ),
        };
      }
      if (this.migration === undefined) {
        await this.db.raw('select 1');
        return { readiness: ready };
      }
      const applied = await this.db('knex_migrations')
        .where({ name: this.migration })
        .first<{ name: string } | undefined>('name');
      return applied
        ? { readiness: ready }
        : {
            readiness: notReady(
              'migrations_pending',
              `The database lacks migration ${this.migration}: run \`npm run migrate\`, or start one instance of this version.`,
            ),
          };
    } catch (error) {
      return { readiness: notReady('database_unavailable', 'The database did not answer.'), cause: error };
    }
  }

  /** A change of state is logged once (a probe every few seconds would otherwise repeat it). */
  #noteChange({ readiness, cause }: Probe): void {
    const reason = readiness.ready ? undefined : readiness.reason;
    if (reason === this.#lastReason) {
      return;
    }
    const afterOutage = this.#lastByOutage;
    this.#lastReason = reason;
    this.#lastByOutage = reason === 'database_unavailable' && this.outage.down;
    if (this.#lastByOutage || (readiness.ready && afterOutage)) {
      return;
    }
    if (readiness.ready) {
      this.logger.info('ready again: the database answers and is up to date');
    } else {
      this.logger.warn({ reason, err: cause }, `not ready: ${readiness.message}`);
    }
  }
}

async function sameFile(path: string, identity: FileIdentity): Promise<boolean> {
  try {
    const now = await stat(path);
    return now.dev === identity.dev && now.ino === identity.ino;
  } catch {
    return false;
  }
}
