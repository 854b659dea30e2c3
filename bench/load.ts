/**
 * The load generator, always a process of its own (never in the benchmark's process, where it would
 * share an event loop with the bookkeeping): `wrk` when installed, else autocannon's CLI.
 * BENCH_LOAD=wrk|autocannon chooses one.
 */
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** One POST the load generator repeats. */
export type Load = { url: string; body: string; headers: Record<string, string> };

export type Measured = {
  requests: number;
  seconds: number;
  perSecond: number;
  /** Latency percentiles, ms. */
  p50: number;
  p99: number;
  /** Responses other than 2xx/3xx. */
  non2xx: number;
  /** Connection errors and timeouts. */
  errors: number;
};

export type LoadOptions = { connections: number; threads: number; seconds: number; cpus?: string };

const autocannonCli = join(createRequire(import.meta.url).resolve('autocannon'), '..', 'autocannon.js');

function wrkVersion(): string | undefined {
  const probe = spawnSync('wrk', ['-v'], { encoding: 'utf8' });
  if (probe.error) {
    return undefined;
  }
  return /wrk (\S+)/.exec(`${probe.stdout}${probe.stderr}`)?.[1] ?? 'unknown version';
}

const chosen = process.env.BENCH_LOAD;
if (chosen !== undefined && chosen !== 'wrk' && chosen !== 'autocannon') {
  throw new Error(`BENCH_LOAD must be wrk or autocannon, not ${chosen}`);
}
const wrk = chosen === 'autocannon' ? undefined : wrkVersion();
if (chosen === 'wrk' && !wrk) {
  throw new Error('BENCH_LOAD=wrk but wrk is not installed');
}

export const loadGenerator: { name: 'wrk' | 'autocannon'; description: string } = wrk
  ? { name: 'wrk', description: `wrk ${wrk}` }
  : {
      name: 'autocannon',
      description: `autocannon ${(JSON.parse(readFileSync(join(autocannonCli, '..', 'package.json'), 'utf8')) as { version: string }).version} (CLI)`,
    };

const folder = mkdtempSync(join(tmpdir(), 'bench-load-'));
process.on('exit', () => rmSync(folder, { recursive: true, force: true }));

function run(command: string, args: string[], cpus: string | undefined): Promise<string> {
  const [file, argv] = cpus ? ['taskset', ['-c', cpus, command, ...args]] : [command, args];
  return new Promise((resolve, reject) => {
    execFile(file, argv, { maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) {
        reject(new Error(`${command} failed: ${stderr || error.message}`));
      } else {
        resolve(stdout);
      }
    });
  });
}

/** A Lua string literal; what we send is printable ASCII, anything else is refused rather than mangled. */
function lua(value: string): string {
  if (!/^[\x20-\x7e]*$/.test(value)) {
    throw new Error('wrk script values must be printable ASCII');
  }
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/** wrk sends the POST through a script of its own and prints its figures as one JSON line when done. */
function wrkScript(load: Load): string {
  const path = join(folder, `wrk-${Math.random().toString(36).slice(2)}.lua`);
  const headers = Object.entries(load.headers).map(([name, value]) => `wrk.headers[${lua(name)}] = ${lua(value)}`);
  writeFileSync(
    path,
    [
      'wrk.method = "POST"',
      `wrk.body = ${lua(load.body)}`,
      ...headers,
      'done = function(summary, latency, requests)',
      '  local e = summary.errors',
      '  io.write(string.format(\'BENCH {"requests":%d,"us":%d,"p50":%d,"p99":%d,"non2xx":%d,"errors":%d}\\n\',',
      '    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), e.status,',
      '    e.connect + e.read + e.write + e.timeout))',
      'end',
      '',
    ].join('\n'),
  );
  return path;
}

export async function generateLoad(load: Load, options: LoadOptions): Promise<Measured> {
  if (loadGenerator.name === 'wrk') {
    const script = wrkScript(load);
    const output = await run(
      'wrk',
      [
        `-t${options.threads}`,
        `-c${options.connections}`,
        `-d${options.seconds}s`,
        '--timeout',
        '10s',
        '-s',
        script,
        load.url,
      ],
      options.cpus,
    );
    rmSync(script);
    const line = output.split('\n').find((text) => text.startsWith('BENCH '));
    if (!line) {
      throw new Error(`wrk printed no result:\n${output}`);
    }
    const figures = JSON.parse(line.slice('BENCH '.length)) as {
      requests: number;
      us: number;
      p50: number;
      p99: number;
      non2xx: number;
      errors: number;
    };
    const seconds = figures.us / 1e6;
    return {
      requests: figures.requests,
      seconds,
      perSecond: figures.requests / seconds,
      p50: figures.p50 / 1000,
      p99: figures.p99 / 1000,
      non2xx: figures.non2xx,
      errors: figures.errors,
    };
  }
  const body = join(folder, `body-${Math.random().toString(36).slice(2)}`);
  writeFileSync(body, load.body);
  const headers = Object.entries(load.headers).flatMap(([name, value]) => ['-H', `${name}:${value}`]);
  const output = await run(
    process.execPath,
    [
      autocannonCli,
      '-j',
      '-n',
      '-c',
      String(options.connections),
      '-d',
      String(options.seconds),
      '-m',
      'POST',
      ...headers,
      '-i',
      body,
      load.url,
    ],
    options.cpus,
  );
  rmSync(body);
  const result = JSON.parse(output) as {
    requests: { total: number };
    duration: number;
    latency: { p50: number; p99: number };
    non2xx: number;
    errors: number;
    timeouts: number;
  };
  return {
    requests: result.requests.total,
    seconds: result.duration,
    perSecond: result.requests.total / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  };
}
