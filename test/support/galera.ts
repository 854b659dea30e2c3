import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import knex from 'knex';

import { eventually } from './eventually.ts';
import { freePort } from './service.ts';

const provider = '/usr/lib/galera/libgalera_smm.so';
const mariadbd = '/usr/sbin/mariadbd';
const installDb = '/usr/bin/mariadb-install-db';

/** Why this machine cannot run a Galera cluster, or undefined when it can. */
export function galeraMissing(): string | undefined {
  for (const [path, what] of [
    [mariadbd, 'MariaDB server (mariadb-server)'],
    [installDb, 'mariadb-install-db (mariadb-server)'],
    [provider, 'the Galera provider (galera-4)'],
    ['/usr/bin/wsrep_sst_rsync', 'the rsync state transfer script (mariadb-server)'],
  ]) {
    if (!existsSync(path)) {
      return `${what} is not installed: no ${path}`;
    }
  }
  if (spawnSync('rsync', ['--version']).status !== 0) {
    return 'rsync is not installed (the state transfer needs it)';
  }
  if (process.getuid?.() === 0 && serverUser() === undefined) {
    return 'no user "mysql" to run the servers as (as root, the rsync state transfer writes as nobody)';
  }
  return undefined;
}

/**
 * The servers run as `mysql` when the test runs as root: the joiner's rsync daemon, started by a
 * server running as root, would write the copied files as `nobody` and fail.
 */
function serverUser(): { name: string; uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) {
    return { name: process.env.USER ?? 'root', uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 };
  }
  const id = (flag: string) => spawnSync('id', [flag, 'mysql'], { encoding: 'utf8' });
  const [uid, gid] = [id('-u'), id('-g')];
  return uid.status === 0 && gid.status === 0
    ? { name: 'mysql', uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) }
    : undefined;
}

type Node = {
  index: number;
  folder: string;
  port: number;
  config: string;
  process?: ChildProcess;
  exited?: Promise<void>;
};

/**
 * A throwaway Galera cluster of MariaDB servers on loopback ports, each with its own data folder
 * under one temporary folder, joined by rsync state transfer. The first node bootstraps it; the
 * others join it and copy its state.
 */
export class GaleraCluster {
  readonly folder: string;
  readonly nodes: Node[];

  private constructor(folder: string, nodes: Node[]) {
    this.folder = folder;
    this.nodes = nodes;
  }

  static async start(size = 3): Promise<GaleraCluster> {
    const user = serverUser()!;
    const folder = mkdtempSync(join(tmpdir(), 'galera-'));
    chmodSync(folder, 0o755);
    const ports = await Promise.all(
      Array.from({ length: size }, async () => ({
        port: await freePort(),
        group: await freePort(),
        ist: await freePort(),
        sst: await freePort(),
      })),
    );
    const address = `gcomm://${ports.map(({ group }) => `127.0.0.1:${group}`).join(',')}`;
    const nodes = ports.map(({ port, group, ist, sst }, index): Node => {
      const nodeFolder = join(folder, `node${index}`);
      mkdirSync(join(nodeFolder, 'data'), { recursive: true });
      const config = join(nodeFolder, 'my.cnf');
      writeFileSync(
        config,
        [
          '[mysqld]',
          `user=${user.name}`,
          `datadir=${join(nodeFolder, 'data')}`,
          `socket=${join(nodeFolder, 'mysqld.sock')}`,
          `pid-file=${join(nodeFolder, 'mysqld.pid')}`,
          `log-error=${join(nodeFolder, 'error.log')}`,
          'bind-address=127.0.0.1',
          `port=${port}`,
          'skip-name-resolve',
          // What Galera requires of every node.
          'binlog_format=ROW',
          'default_storage_engine=InnoDB',
          'innodb_autoinc_lock_mode=2',
          // A throwaway cluster: small, and durable only as far as its replication is.
          'innodb_buffer_pool_size=64M',
          'innodb_log_file_size=32M',
          'innodb_flush_log_at_trx_commit=0',
          'performance_schema=OFF',
          'wsrep_on=ON',
          `wsrep_provider=${provider}`,
          'wsrep_cluster_name=identity_test',
          `wsrep_cluster_address=${address}`,
          `wsrep_node_name=node${index}`,
          `wsrep_node_address=127.0.0.1:${group}`,
          `wsrep_provider_options="gmcast.listen_addr=tcp://127.0.0.1:${group};ist.recv_addr=127.0.0.1:${ist};gcache.size=64M"`,
          'wsrep_sst_method=rsync',
          `wsrep_sst_receive_address=127.0.0.1:${sst}`,
          'wsrep_slave_threads=2',
          // What docs/operations.md asks of a cluster the service runs on: reads see every commit before them.
          'wsrep_sync_wait=1',
          '',
        ].join('\n'),
      );
      for (const path of [nodeFolder, join(nodeFolder, 'data'), config]) {
        chownSync(path, user.uid, user.gid);
      }
      return { index, folder: nodeFolder, port, config };
    });
    const cluster = new GaleraCluster(folder, nodes);
    try {
      const first = nodes[0];
      const installed = spawnSync(
        installDb,
        [
          `--defaults-file=${first.config}`,
          '--auth-root-authentication-method=normal',
          '--skip-test-db',
          `--user=${user.name}`,
        ],
        { encoding: 'utf8' },
      );
      if (installed.status !== 0) {
        throw new Error(`mariadb-install-db failed: ${installed.stderr}`);
      }
      await cluster.#launch(first, ['--wsrep-new-cluster']);
      for (const node of nodes.slice(1)) {
        await cluster.#launch(node);
      }
      return cluster;
    } catch (error) {
      await cluster.stop();
      throw error;
    }
  }

  /** The URL of `database` through node `index`, as root. */
  url(index: number, database: string): string {
    return `mysql://root@127.0.0.1:${this.nodes[index].port}/${database}`;
  }

  async createDatabase(database: string): Promise<void> {
    await this.query(0, 'create database ?? character set utf8mb4 collate utf8mb4_unicode_ci', [database]);
  }

  /** Runs one statement through node `index`, as root; its rows. */
  async query<T>(index: number, sql: string, bindings: string[] = []): Promise<T[]> {
    const admin = knex({ client: 'mysql2', connection: this.url(index, ''), pool: { min: 0, max: 1 } });
    try {
      return ((await admin.raw(sql, bindings)) as [T[]])[0];
    } finally {
      await admin.destroy();
    }
  }

  /** Kills node `index` as a crash would (SIGKILL): no shutdown, no goodbye to the cluster. */
  async kill(index: number): Promise<void> {
    const node = this.nodes[index];
    node.process?.kill('SIGKILL');
    await node.exited;
    node.process = undefined;
  }

  /** Starts a killed node again: it rejoins and catches up (incremental or full state transfer). */
  async restart(index: number): Promise<void> {
    await this.#launch(this.nodes[index]);
  }

  async stop(): Promise<void> {
    for (const node of this.nodes) {
      node.process?.kill('SIGKILL');
      await node.exited;
    }
    rmSync(this.folder, { recursive: true, force: true });
  }

  /** Starts a node's server and waits until it is a synced member of the primary component. */
  async #launch(node: Node, extra: string[] = []): Promise<void> {
    const child = spawn(mariadbd, [`--defaults-file=${node.config}`, ...extra], { stdio: 'ignore' });
    node.process = child;
    node.exited = new Promise((resolve) => child.once('exit', () => resolve()));
    const probe = knex({
      client: 'mysql2',
      connection: { uri: `mysql://root@127.0.0.1:${node.port}/`, connectTimeout: 2000 } as never,
      pool: { min: 0, max: 1 },
      // Refused until the server listens: expected, and asked again.
      log: { warn: () => undefined },
    });
    try {
      await eventually(
        async () => {
          if (child.exitCode !== null) {
            throw new Error(`node${node.index} exited while starting:\n${tail(join(node.folder, 'error.log'))}`);
          }
          try {
            const [rows] = (await probe.raw("show status like 'wsrep_local_state_comment'")) as [
              Array<{ Value: string }>,
            ];
            return rows[0]?.Value === 'Synced';
          } catch {
            return false; // Not accepting connections yet.
          }
        },
        120_000,
        () => `node${node.index} synced:\n${tail(join(node.folder, 'error.log'))}`,
      );
    } finally {
      await probe.destroy();
    }
  }
}

function tail(file: string): string {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-30).join('\n');
  } catch {
    return '(no error log)';
  }
}
