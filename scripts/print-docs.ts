// The sections of docs/ that say what the code holds, printed from it, so that they cannot drift:
// the layer order (scripts/layers.json), the webhook payload examples (lib/hooks/samples.ts) and the
// error codes (lib/http/error-codes.ts). Each sits between two markers in its document; everything
// around them is written by hand.
//
//   npm run docs             # prints every section into its document
//   npm run docs -- --check  # fails, naming the sections, when a document differs from the code
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

import { type HookEventGroup, hookEventGroups } from '../lib/hooks/events.ts';
import { samplePayload } from '../lib/hooks/samples.ts';
import { errorCodes } from '../lib/http/error-codes.ts';
import layers from './layers.json' with { type: 'json' };

const root = resolve(import.meta.dirname, '..');

type Section = { document: string; name: string; print: () => string };

function printLayers(): string {
  const labelWidth = Math.max(...layers.map(({ band }) => band.length)) + 3;
  const bands = layers.map(({ band, lines }) =>
    lines
      .map(({ folders, note }, index) => {
        const label = (index === 0 ? band : '').padEnd(labelWidth);
        const names = folders.filter((folder) => folder !== '.').join(' · ');
        return ` ${label}${[names, note && (names ? `(${note})` : note)].filter(Boolean).join('  ')}`.trimEnd();
      })
      .join('\n'),
  );
  return ['```text', bands.join('\n    |\n'), '```'].join('\n');
}

function printPayloads(group: HookEventGroup): string {
  return hookEventGroups[group]
    .map((event) =>
      [
        `<details><summary><code>${event}</code></summary>`,
        '',
        '```json',
        JSON.stringify(samplePayload(event, 'hk1a2b3c4d5e6f7g8h9i0'), null, 2),
        '```',
        '',
        '</details>',
      ].join('\n'),
    )
    .join('\n\n');
}

/**
 * A message with its params shown as `{name}`, after its plain sentence where it has one for no
 * params; one that computes more than it names is described.
 */
function messageOf(message: string | ((params: never) => string)): string {
  if (typeof message === 'string') {
    return message;
  }
  const named = new Proxy({}, { get: (_target, key) => (typeof key === 'string' ? `{${key}}` : undefined) });
  let withNames: string;
  try {
    withNames = message(named as never);
  } catch {
    return '(names the values it is about)';
  }
  try {
    const plain = message(undefined as never);
    return plain === withNames ? plain : `${plain} (or: ${withNames})`;
  } catch {
    return withNames;
  }
}

function printErrorCodes(): string {
  const cell = (text: string) => text.replaceAll('|', '\\|').replaceAll('\n', ' ');
  const rows = Object.entries(errorCodes).map(([code, entry]) => {
    const status = 'alsoStatus' in entry ? `${entry.status} (or ${entry.alsoStatus})` : String(entry.status);
    return `| \`${code}\` | ${status} | ${cell(messageOf(entry.message))} |`;
  });
  return ['| Code | Status | Message |', '|---|---|---|', ...rows].join('\n');
}

const sections: Section[] = [
  { document: 'docs/architecture.md', name: 'layers', print: printLayers },
  ...(Object.keys(hookEventGroups) as HookEventGroup[]).map((group) => ({
    document: 'docs/webhooks.md',
    name: `payloads of the ${group} events`,
    print: () => printPayloads(group),
  })),
  { document: 'docs/errors.md', name: 'error codes', print: printErrorCodes },
];

const begin = (name: string) => `<!-- printed by npm run docs: ${name}; edit the code, not this -->`;
const end = (name: string) => `<!-- end of printed: ${name} -->`;

/** Each document with its sections printed afresh, and the names of the sections that changed. */
export function printedDocuments(): { document: string; text: string; changed: string[] }[] {
  const documents = [...new Set(sections.map(({ document }) => document))];
  return documents.map((document) => {
    let text = readFileSync(join(root, document), 'utf8');
    const changed: string[] = [];
    for (const { name, print } of sections.filter((section) => section.document === document)) {
      const from = text.indexOf(begin(name));
      const to = text.indexOf(end(name));
      if (from < 0 || to < from) {
        throw new Error(`${document} has no markers for the printed section "${name}": ${begin(name)} … ${end(name)}`);
      }
      const before = text.slice(0, from + begin(name).length);
      const printed = `\n\n${print()}\n\n`;
      if (text.slice(before.length, to) !== printed) {
        changed.push(name);
      }
      text = before + printed + text.slice(to);
    }
    return { document, text, changed };
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const documents = printedDocuments();
  const stale = documents.flatMap(({ document, changed }) => changed.map((name) => `${document}: ${name}`));
  if (process.argv.includes('--check')) {
    if (stale.length > 0) {
      console.error(`these printed sections differ from the code (npm run docs prints them):\n  ${stale.join('\n  ')}`);
      process.exit(1);
    }
  } else {
    for (const { document, text, changed } of documents) {
      if (changed.length > 0) {
        writeFileSync(join(root, document), text);
      }
    }
    console.log(stale.length > 0 ? `printed:\n  ${stale.join('\n  ')}` : 'docs: every printed section is up to date');
  }
}
