import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, globalAgent } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** What the server answers at a path: a JSON document by default, or any status, headers and body. */
export type Answer = { status?: number; headers?: Record<string, string>; body: unknown; delayMs?: number };

/**
 * An https server on 127.0.0.1 serving client metadata documents (a client's own site). Its
 * certificate is self-signed, made by openssl for this run, and trusted by this process's https
 * requests (the service's fetch) until `close`. It counts the requests at each path.
 */
export async function startDocumentServer() {
  const folder = mkdtempSync(join(tmpdir(), 'documents-'));
  execFileSync(
    'openssl',
    [
      ...['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1'],
      ...['-keyout', join(folder, 'key.pem'), '-out', join(folder, 'cert.pem'), '-subj', '/CN=localhost'],
      ...['-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1'],
    ],
    { stdio: 'ignore' },
  );
  const key = readFileSync(join(folder, 'key.pem'));
  const cert = readFileSync(join(folder, 'cert.pem'));
  rmSync(folder, { recursive: true });

  const answers = new Map<string, Answer>();
  const counts = new Map<string, number>();
  const server = createServer({ key, cert }, (request, response) => {
    const path = new URL(request.url ?? '/', 'https://localhost').pathname;
    counts.set(path, (counts.get(path) ?? 0) + 1);
    const answer = answers.get(path) ?? { status: 404, body: { error: 'not found' } };
    const body = typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body);
    setTimeout(() => {
      response.writeHead(answer.status ?? 200, { 'content-type': 'application/json', ...answer.headers });
      response.end(body);
    }, answer.delayMs ?? 0);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const trusted = globalAgent.options.ca;
  globalAgent.options.ca = cert;

  return {
    /** The URL of `path` on this server, by the name `localhost` (or another, e.g. `127.0.0.1`). */
    url: (path: string, host = 'localhost') => `https://${host}:${port}${path}`,
    serve: (path: string, answer: Answer) => answers.set(path, answer),
    fetches: (path: string) => counts.get(path) ?? 0,
    /** Requests at every path together. */
    allFetches: () => [...counts.values()].reduce((sum, count) => sum + count, 0),
    async close() {
      globalAgent.options.ca = trusted;
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

export type DocumentServer = Awaited<ReturnType<typeof startDocumentServer>>;
