import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The "application" of the end-to-end tests: a tiny HTTP server on 127.0.0.1 that receives the redirects. */
export async function startApplication(): Promise<{ server: Server; origin: string; received: URL[] }> {
  const received: URL[] = [];
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    received.push(url);
    const text =
      url.pathname === '/callback'
        ? 'Signed in: the application received a code.'
        : url.pathname === '/signed-out'
          ? 'Signed out.'
          : 'Not found';
    response.writeHead(url.pathname === '/callback' || url.pathname === '/signed-out' ? 200 : 404, {
      'content-type': 'text/html; charset=utf-8',
    });
    response.end(`<!doctype html><title>Application</title><p>${text}</p>`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received };
}
