import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';

import { eventually } from '../support/eventually.ts';
import { freePort } from '../support/service.ts';

export type Received = { method: string; url: string; headers: IncomingHttpHeaders; body: string; receivedAt: number };
export type Answer = { status: number; headers?: Record<string, string>; body?: string; delayMs?: number };

/**
 * A webhook receiver on 127.0.0.1 that records every request. `answer` decides each response
 * (by default 200); `answers` queues answers for the next requests, then `answer` takes over.
 */
export class Receiver {
  readonly requests: Received[] = [];
  answer: (request: Received, index: number) => Answer = () => ({ status: 200, body: 'ok' });
  readonly answers: Answer[] = [];
  #server: Server | undefined;

  readonly port: number;

  private constructor(port: number) {
    this.port = port;
  }

  /** Listens on a free port (or `port`). */
  static async start(port?: number): Promise<Receiver> {
    const receiver = new Receiver(port ?? (await freePort()));
    await receiver.listen();
    return receiver;
  }

  /** A receiver that is down: its port is known but nothing listens until `listen()`. */
  static async down(): Promise<Receiver> {
    return new Receiver(await freePort());
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/hook`;
  }

  get ids(): string[] {
    return this.requests.map((request) => String(request.headers['webhook-id']));
  }

  async listen(): Promise<void> {
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const received: Received = {
          method: request.method ?? '',
          url: request.url ?? '',
          headers: request.headers,
          body: Buffer.concat(chunks).toString('utf8'),
          receivedAt: Date.now(),
        };
        const index = this.requests.push(received) - 1;
        const answer = this.answers.shift() ?? this.answer(received, index);
        const send = () => {
          response.writeHead(answer.status, answer.headers);
          response.end(answer.body ?? '');
        };
        if (answer.delayMs) {
          setTimeout(send, answer.delayMs);
        } else {
          send();
        }
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.#server = server;
  }

  /** Waits until `count` requests (in all) arrived, or fails after `timeoutMs`. */
  waitFor(count: number, timeoutMs = 15_000): Promise<Received[]> {
    return eventually(
      () => this.requests.length >= count && this.requests,
      timeoutMs,
      () => `${count} webhook requests, got ${this.requests.length}`,
    );
  }

  async close(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    if (server) {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  }
}
