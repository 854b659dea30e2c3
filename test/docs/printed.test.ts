import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { expect } from 'chai';

import { printedDocuments } from '../../scripts/print-docs.ts';

/**
 * docs/ prints what the code holds (the layer order, the webhook payloads, the error codes) between
 * markers; a change of the code that is not printed into the docs fails here (issue #30).
 */
describe('printed docs', () => {
  it('say what the code holds: npm run docs has nothing left to print', () => {
    const stale = printedDocuments().flatMap(({ document, changed }) => changed.map((name) => `${document}: ${name}`));
    expect(stale, 'run `npm run docs` and commit what it prints').to.deep.equal([]);
  });

  it('show every webhook payload with the actor the service sends', () => {
    const webhooks = printedDocuments().find(({ document }) => document === 'docs/webhooks.md');
    const payloads = [
      ...(webhooks?.text ?? '').matchAll(/<summary><code>([\w.]+)<\/code><\/summary>\n\n```json\n([^`]+)```/g),
    ];
    expect(payloads).to.have.length(27);
    const withoutActor = payloads.filter(([, event, json]) => event.includes('.') && !('actor' in JSON.parse(json)));
    expect(withoutActor.map(([, event]) => event)).to.deep.equal(['Identifier.Lockout', 'Message.RateLimited']);
  });
});

const root = resolve(import.meta.dirname, '../..');

describe('the docs', () => {
  it('link only to files of the repository, and every such link resolves', () => {
    const documents = [
      'README.md',
      ...readdirSync(join(root, 'docs'))
        .filter((name) => name.endsWith('.md'))
        .map((name) => `docs/${name}`),
    ];
    const broken = documents.flatMap((document) =>
      [...readFileSync(join(root, document), 'utf8').matchAll(/\]\(([^)\s]+)\)/g)]
        .map(([, target]) => target.split('#')[0])
        .filter((target) => target !== '' && !/^(https?|mailto):/.test(target))
        .filter((target) => {
          const path = resolve(root, dirname(document), decodeURIComponent(target));
          return !path.startsWith(root) || !existsSync(path);
        })
        .map((target) => `${document} -> ${target}`),
    );
    expect(broken).to.deep.equal([]);
    const outside = documents.filter((document) =>
      /CONTRACT\.md|EXPERIENCE-API\.md|\.\.\/shared\//.test(readFileSync(join(root, document), 'utf8')),
    );
    expect(outside, 'documents citing files users do not have').to.deep.equal([]);
  });
});
