import { Agent as HttpAgent, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { type Got, got, type Request } from 'got';

import { assertLiteralTarget, guardedLookup, TargetRefusedError } from '../../http/outbound/outbound-guard.ts';
import { hookTargetSubject } from '../target-guard.ts';
import { parseRetryAfter } from './retry.ts';

export type SendResult = {
  statusCode?: number;
  /** The start of the response body (at most `bodyLimit` bytes, as UTF-8). */
  body?: string;
  retryAfterMs?: number;
  /** Why no (usable) response came: connection refused, timeout, refused target... */
  error?: string;
  refused?: boolean;
  durationMs: number;
};

/**
 * What is kept of a response body: the recent-logs excerpt. 16 KB holds a receiver's echo of a
 * whole event (Logto's tests read one back), and no more is read of an answer.
 */
export const bodyLimit = 16_384;
export const sendTimeoutMs = 10_000;

/**
 * Posts webhook bodies with got: one attempt each (no retries, no redirects), 10 s for the whole
 * exchange, at most 2 KB of the answer read. A stream, so that a large answer is cut at the limit
 * rather than buffered whole. Keep-alive agents of its own, so that sockets made under one guard
 * setting are never reused under another.
 */
export class WebhookSender {
  readonly #agents: { http: HttpAgent; https: HttpsAgent };
  readonly #client: Got;
  /**
   * The requests in flight, for `abort()`. A set rather than one AbortSignal given to each: a signal
   * with a listener per request costs each new request a walk of all the others' listeners.
   */
  readonly #inFlight = new Set<Request>();

  private readonly options: { allowPrivateTargets: boolean; timeoutMs?: number; keepAlive?: boolean };

  constructor(options: { allowPrivateTargets: boolean; timeoutMs?: number; keepAlive?: boolean }) {
    this.options = options;
    const keepAlive = options.keepAlive ?? true;
    this.#agents = { http: new HttpAgent({ keepAlive }), https: new HttpsAgent({ keepAlive }) };
    this.#client = got.extend({
      method: 'POST',
      agent: this.#agents,
      dnsLookup: options.allowPrivateTargets ? undefined : guardedLookup(hookTargetSubject),
      timeout: { request: options.timeoutMs ?? sendTimeoutMs },
      followRedirect: false,
      retry: { limit: 0 },
      throwHttpErrors: false,
      decompress: false,
    });
  }

  async send(url: string, body: string, headers: Record<string, string>): Promise<SendResult> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    let target: URL;
    try {
      target = new URL(url);
      if (target.protocol !== 'http:' && target.protocol !== 'https:') {
        throw new Error(`Unsupported protocol "${target.protocol}"`);
      }
      if (!this.options.allowPrivateTargets) {
        assertLiteralTarget(target, hookTargetSubject);
      }
    } catch (error) {
      return { error: (error as Error).message, refused: error instanceof TargetRefusedError, durationMs: elapsed() };
    }
    const stream = this.#client.stream(target, { body, headers });
    this.#inFlight.add(stream);
    return new Promise<SendResult>((resolve) => {
      let response: IncomingMessage | undefined;
      const chunks: Buffer[] = [];
      let size = 0;
      let done = false;
      const finish = (error?: Error) => {
        if (done) {
          return;
        }
        done = true;
        this.#inFlight.delete(stream);
        if (!response?.complete) {
          // Not read to its end (cut at the limit, stalled, failed): the socket is not reused.
          stream.destroy();
        }
        const statusCode = response?.statusCode;
        resolve({
          statusCode,
          body: statusCode === undefined ? undefined : Buffer.concat(chunks).subarray(0, bodyLimit).toString('utf8'),
          retryAfterMs: parseRetryAfter(response?.headers['retry-after']),
          // An error after the status line arrived (a stalled body) does not change the answer.
          error: statusCode === undefined && error ? describe(error) : undefined,
          refused: isRefusal(error),
          durationMs: elapsed(),
        });
      };
      stream.on('response', (answer: IncomingMessage) => {
        response = answer;
      });
      stream.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        size += chunk.length;
        if (size >= bodyLimit) {
          finish();
        }
      });
      stream.on('end', () => finish());
      stream.on('error', (error: Error) => finish(error));
      stream.on('close', () => finish());
    });
  }

  /** Cuts off every request in flight: each answers as an error. */
  abort(): void {
    for (const stream of this.#inFlight) {
      stream.destroy(new Error('The dispatcher stopped before the answer came.'));
    }
  }

  close(): void {
    this.#agents.http.destroy();
    this.#agents.https.destroy();
  }
}

function isRefusal(error: unknown): boolean {
  for (
    let current = error as { code?: string; cause?: unknown } | undefined;
    current;
    current = current.cause as typeof current
  ) {
    if (current instanceof TargetRefusedError || current.code === 'ERR_HOOK_TARGET_REFUSED') {
      return true;
    }
  }
  return false;
}

function describe(error: Error): string {
  const code = (error as { code?: string }).code;
  return code && !error.message.includes(code) ? `${code}: ${error.message}` : error.message;
}
