// @ts-check
/**
 * `npm run build`: the service compiled by tsc into dist/ (lib/, config/, migrations/ as .js), the
 * console into console/dist and the hosted sign-in pages into sign-in/dist (Vite). Then a stamp,
 * dist/build-stamp, records a hash of the sources it was built from.
 *
 * `--if-stale` (what `npm start`, `npm run migrate`, `npm run cli` and the tests run first) builds
 * only when the stamp is missing or no longer matches the sources, so a fresh clone's
 * `npm install && npm start` builds once and later starts cost a hash of the sources (tens of ms).
 * Plain JavaScript: it must run where the build is done already and the build tools are not installed.
 * Everything it prints goes to stderr: `npm run --silent cli -- export > config.json` keeps stdout clean.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const stampFile = join(root, 'dist', 'build-stamp');

/** What the build reads: a change to any of these makes the build stale. */
const sourceFolders = ['lib', 'config', 'migrations', 'console', 'sign-in'];
const sourceFiles = [
  'package.json',
  'package-lock.json',
  'tsconfig.json',
  'tsconfig.build.json',
  'tsconfig.browser.json',
];
/** What the build writes: without them there is nothing to run, whatever the stamp says. */
const outputs = ['dist/lib/main.js', 'console/dist/index.html', 'sign-in/dist/index.html'];

/** @param {string} folder @returns {string[]} */
function filesUnder(folder) {
  return readdirSync(join(root, folder), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name).slice(root.length).replaceAll('\\', '/'))
    .filter((path) => !/^\/?(console|sign-in)\/dist\//.test(path) && !path.includes('/node_modules/'));
}

/** A hash of every source's path and content (content, not mtime: a checkout that touches files without changing them does not rebuild). */
function sourceHash() {
  const hash = createHash('sha256');
  const files = [
    ...sourceFolders.filter((folder) => existsSync(join(root, folder))).flatMap(filesUnder),
    ...sourceFiles.filter((file) => existsSync(join(root, file))),
  ].sort();
  for (const file of files) {
    hash
      .update(`${file}\0`)
      .update(readFileSync(join(root, file)))
      .update('\0');
  }
  return hash.digest('hex');
}

/** @param {'tsc' | 'vite'} tool @param {string[]} args */
function run(tool, args) {
  const result = spawnSync(process.execPath, [tools[tool], ...args], {
    cwd: root,
    stdio: ['ignore', process.stderr, process.stderr],
  });
  if (result.status !== 0) {
    console.error(`build failed: ${tool} ${args.join(' ')}`);
    process.exit(1);
  }
}

const tools = { tsc: 'node_modules/typescript/bin/tsc', vite: 'node_modules/vite/bin/vite.js' };

function build() {
  if (!Object.values(tools).every((tool) => existsSync(join(root, tool)))) {
    console.error(
      'cannot build: TypeScript and Vite are not installed (they are devDependencies; run `npm install` without --omit=dev, then `npm run build`)',
    );
    process.exit(1);
  }
  const hash = sourceHash();
  // A clean dist/: a deleted source (a migration above all) must not live on as a compiled file.
  rmSync(join(root, 'dist'), { recursive: true, force: true });
  run('tsc', ['-p', 'tsconfig.build.json']);
  run('vite', ['build', 'console', '--logLevel', 'warn']);
  run('vite', ['build', 'sign-in', '--logLevel', 'warn']);
  writeFileSync(stampFile, `${hash}\n`);
}

function isStale() {
  if (!outputs.every((file) => existsSync(join(root, file)))) {
    return true;
  }
  // An install that ships the build without its sources has nothing to compare with.
  if (!existsSync(join(root, 'lib'))) {
    return false;
  }
  return !existsSync(stampFile) || readFileSync(stampFile, 'utf8').trim() !== sourceHash();
}

if (!process.argv.includes('--if-stale')) {
  build();
} else if (isStale()) {
  console.error('building (dist/ is missing or older than the sources)...');
  build();
}
