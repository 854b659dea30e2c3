// The structure check `npm test` runs first: imports in lib/ must go one way. It fails on any cycle
// between files, on any cycle between lib/'s folders (a domain folder and everything below it) or
// between the sub-folders of one folder, naming the imports that close each cycle, and on an import
// that goes up or sideways in the layer order of scripts/layers.json: lib/'s folders in bands of
// lines, top first, an import allowed only to a line below; docs/architecture.md prints that list
// (npm run docs), so the picture and the rule are one thing. Type-only imports count: a type shared both ways is
// vocabulary that belongs in a lower folder. It also fails on a table addressed (`db('table')`,
// `trx('table')`) outside a query module (`queries.ts`, `*-queries.ts`) and the allowlist below, and on
// a front end (console/, sign-in/, shared-ui/) importing a schema module (`schemas.ts`, `*-schemas.ts`)
// for anything but types.
//
//   node scripts/check-structure.mjs           # the check
//   node scripts/check-structure.mjs --edges   # every folder-to-folder edge with its import count
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const lib = join(root, 'lib');

/** @type {{ band: string, lines: { folders: string[], note?: string }[] }[]} */
const layers = JSON.parse(readFileSync(join(root, 'scripts/layers.json'), 'utf8'));
/** Each folder's line, counted from the top; `.` is lib/'s own files. */
const lineOf = new Map(
  layers.flatMap(({ lines }) => lines).flatMap(({ folders }, line) => folders.map((folder) => [folder, line])),
);

const files = readdirSync(lib, { recursive: true, encoding: 'utf8' })
  .filter((file) => file.endsWith('.ts'))
  .map((file) => join(lib, file));

// Static imports and re-exports (`from '…'`) and literal dynamic imports, relative ones only.
const importPattern = /(?:\bfrom\s+|\bimport\s*\(\s*|^\s*import\s+)['"](\.{1,2}\/[^'"]+)['"]/gm;

/** @type {Map<string, Set<string>>} file → files it imports (paths relative to lib/) */
const fileEdges = new Map();
for (const file of files) {
  const source = readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\/|\/\/[^\n]*/g, '');
  const targets = new Set();
  for (const match of source.matchAll(importPattern)) {
    const target = resolve(dirname(file), match[1]);
    if (target.startsWith(lib) && target.endsWith('.ts')) {
      targets.add(relative(lib, target));
    }
  }
  fileEdges.set(relative(lib, file), targets);
}

/** The folder a file belongs to: its first folder under lib/, or '.' for lib/'s own files. */
const folderOf = (file) => (file.includes('/') ? file.slice(0, file.indexOf('/')) : '.');

/** @type {Map<string, Map<string, string[]>>} folder → folder → the imports that make the edge */
const folderEdges = new Map();
for (const [file, targets] of fileEdges) {
  for (const target of targets) {
    const from = folderOf(file);
    const to = folderOf(target);
    if (from === to) continue;
    const out = folderEdges.get(from) ?? new Map();
    folderEdges.set(from, out);
    out.set(to, [...(out.get(to) ?? []), `${file} -> ${target}`]);
  }
}

/**
 * The sub-folder a file belongs to inside its folder (`organizations/members/routes.ts` ->
 * `organizations/members`); undefined for a file at a folder's root, whose vocabulary every
 * sub-folder may share and whose routes may mount theirs.
 */
const subFolderOf = (file) => {
  const parts = file.split('/');
  return parts.length > 2 ? `${parts[0]}/${parts[1]}` : undefined;
};

/** @type {Map<string, Set<string>>} sub-folder → sub-folders of the same folder it imports */
const subFolderEdges = new Map();
for (const [file, targets] of fileEdges) {
  const from = subFolderOf(file);
  for (const target of targets) {
    const to = subFolderOf(target);
    if (from && to && from !== to && folderOf(file) === folderOf(target)) {
      subFolderEdges.set(from, (subFolderEdges.get(from) ?? new Set()).add(to));
    }
  }
}

/** Strongly connected components with more than one member (Tarjan), each a cycle or several. */
function cycles(nodes, next) {
  let index = 0;
  const indexes = new Map();
  const lows = new Map();
  const stack = [];
  const onStack = new Set();
  const found = [];
  const visit = (node) => {
    indexes.set(node, index);
    lows.set(node, index);
    index += 1;
    stack.push(node);
    onStack.add(node);
    for (const target of next(node)) {
      if (!indexes.has(target)) {
        visit(target);
        lows.set(node, Math.min(lows.get(node), lows.get(target)));
      } else if (onStack.has(target)) {
        lows.set(node, Math.min(lows.get(node), indexes.get(target)));
      }
    }
    if (lows.get(node) === indexes.get(node)) {
      const component = [];
      let member;
      do {
        member = stack.pop();
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const node of nodes) {
    if (!indexes.has(node)) visit(node);
  }
  return found;
}

if (process.argv.includes('--edges')) {
  for (const [from, out] of [...folderEdges].sort()) {
    for (const [to, imports] of [...out].sort()) {
      const back = folderEdges.get(to)?.get(from)?.length ?? 0;
      console.log(`${from} -> ${to}: ${imports.length}${back ? `  (back: ${back})` : ''}`);
    }
  }
  process.exit(0);
}

/** A query module: the one place its tables are addressed (docs/architecture.md, "One query layer"). */
const isQueryModule = (file) => /(^|\/|-)queries\.ts$/.test(file);
// `db('users')`, `trx('oidc_keys')`, `db(where.table)`: a handle called with a table name.
const tableAccessPattern = /\b(?:db|trx)\(\s*['"`\w]/;

/**
 * Files that still address tables outside a query module. The list may only shrink: a file that
 * no longer does is an error until it is taken off.
 */
const tableAccessAllowed = new Set([
  // Infrastructure that reads or writes tables as such, not as a domain's entities.
  'storage/migrate.ts', // knex's migration bookkeeping
  'storage/shared-cache.ts', // cache_versions, the version rows every domain's cache bumps
  'storage/sealed-columns.ts', // re-seals every sealed column, table by table
  'health/readiness.ts', // reads which migrations are applied
  'metrics/endpoint.ts', // reads the delivery backlog for a gauge
  'organizations/links.ts', // the link-set store, generic over link tables
]);

const problems = [];
for (const file of [...fileEdges.keys()].sort()) {
  if (isQueryModule(file)) continue;
  const source = readFileSync(join(lib, file), 'utf8').replace(/\/\*[\s\S]*?\*\/|\/\/[^\n]*/g, '');
  const accesses = tableAccessPattern.test(source);
  if (accesses && !tableAccessAllowed.has(file)) {
    problems.push(`table access outside a query module: ${file} (move it into the table's *queries.ts)`);
  } else if (!accesses && tableAccessAllowed.has(file)) {
    problems.push(`${file} no longer addresses tables: take it off the allowlist in scripts/check-structure.mjs`);
  }
}
for (const missing of [...tableAccessAllowed].filter((file) => !fileEdges.has(file))) {
  problems.push(`allowlisted file does not exist: ${missing}`);
}
for (const component of cycles([...fileEdges.keys()], (file) => fileEdges.get(file) ?? [])) {
  const members = new Set(component);
  const ties = component.flatMap((file) =>
    [...(fileEdges.get(file) ?? [])].filter((target) => members.has(target)).map((target) => `${file} -> ${target}`),
  );
  problems.push(`file cycle: ${component.join(', ')}\n    ${ties.join('\n    ')}`);
}
for (const component of cycles([...folderEdges.keys()], (folder) => folderEdges.get(folder)?.keys() ?? [])) {
  const members = new Set(component);
  const ties = component.flatMap((folder) =>
    [...(folderEdges.get(folder) ?? [])]
      .filter(([to]) => members.has(to))
      .map(([to, imports]) => `${folder} -> ${to} (${imports.length}): ${imports.slice(0, 3).join('; ')}`),
  );
  problems.push(`folder cycle: ${component.join(', ')}\n    ${ties.join('\n    ')}`);
}
for (const component of cycles([...subFolderEdges.keys()], (folder) => subFolderEdges.get(folder) ?? [])) {
  problems.push(`sub-folder cycle: ${component.join(', ')}`);
}
/**
 * A folder holds at most this many files directly; past it, its mechanisms get sub-folders named for
 * them (docs/architecture.md).
 */
const filesPerFolder = 16;
const filesIn = new Map();
for (const file of fileEdges.keys()) {
  const folder = file.includes('/') ? file.slice(0, file.lastIndexOf('/')) : '.';
  filesIn.set(folder, (filesIn.get(folder) ?? 0) + 1);
}
for (const [folder, count] of [...filesIn].sort()) {
  if (count > filesPerFolder) {
    problems.push(`lib/${folder}/ holds ${count} files (at most ${filesPerFolder}): give its mechanisms sub-folders`);
  }
}
const folders = new Set([...fileEdges.keys()].map(folderOf));
for (const folder of [...folders].filter((folder) => !lineOf.has(folder)).sort()) {
  problems.push(`lib/${folder}/ has no line in scripts/layers.json: put it below the lowest folder that imports it`);
}
for (const folder of [...lineOf.keys()].filter((folder) => !folders.has(folder))) {
  problems.push(`scripts/layers.json names ${folder}, which lib/ does not have`);
}
for (const [from, out] of [...folderEdges].sort()) {
  for (const [to, imports] of [...out].sort()) {
    if (lineOf.has(from) && lineOf.has(to) && lineOf.get(to) <= lineOf.get(from)) {
      const where = lineOf.get(to) === lineOf.get(from) ? 'its own line' : 'a line above it';
      problems.push(`${from} imports ${to}, on ${where} in scripts/layers.json: ${imports.slice(0, 3).join('; ')}`);
    }
  }
}

/*
 * The front ends (the console, the sign-in pages and what they share) read the answers' types from
 * the service's schema modules; a value import of one would bring zod and the server's code along
 * into the browser bundle, and under verbatimModuleSyntax so does `import { type X }`.
 */
const isSchemaModule = (file) => /(^|\/|-)schemas\.ts$/.test(file);
const frontEndImport = /^\s*import\s+(type\s+)?[^'";]*?\bfrom\s+['"](\.{1,2}\/[^'"]+)['"]/gm;
for (const folder of ['console/src', 'sign-in/src', 'shared-ui']) {
  const sources = readdirSync(join(root, folder), { recursive: true, encoding: 'utf8' })
    .filter((file) => /\.tsx?$/.test(file))
    .map((file) => join(root, folder, file));
  for (const file of sources) {
    for (const [, typeOnly, specifier] of readFileSync(file, 'utf8').matchAll(frontEndImport)) {
      const target = relative(lib, resolve(dirname(file), specifier));
      if (!target.startsWith('..') && isSchemaModule(target) && !typeOnly) {
        problems.push(`${relative(root, file)} imports lib/${target} for values: use \`import type\``);
      }
    }
  }
}

if (problems.length > 0) {
  console.error(`lib/ breaks its structure rules (docs/architecture.md):\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
console.log(
  `structure: ${fileEdges.size} files in lib/, no file, folder or sub-folder cycles, at most ${filesPerFolder} files per folder, imports down the layers of scripts/layers.json only; tables addressed in query modules only, ${tableAccessAllowed.size} files allowlisted; front ends import schema modules for types only`,
);
