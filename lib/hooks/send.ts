import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';

import { got } from 'got';

import { assertLiteralTarget, guardedLookup, TargetRefusedError } from './target-guard.ts';
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

/** What is kept of a response body: the recent-logs excerpt. */
export const bodyLimit = 2048;
export const sendTimeoutMs = 10_000;

/**
 * Posts webhook bodies: one attempt each (no got retries, no redirects), 10 s for the whole
 * exchange, at most 2 KB of the answer read. Keep-alive agents of its own, so that sockets made
 * under one guard setting are never reused under another.
 */
export class WebhookSender {
  readonly #agents: { http: HttpAgent; https: HttpsAgent };

  constructor(private readonly options: { allowPrivateTargets: boolean; timeoutMs?: number; keepAlive?: boolean }) {
    const keepAlive = options.keepAlive ?? true;
    this.#agents = { http: new HttpAgent({ keepAlive }), https: new HttpsAgent({ keepAlive }) };
  }

  async send(url: string, body: string, headers: Record<string, string>, signal?: AbortSignal): Promise<SendResult> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    if (!this.options.allowPrivateTargets) {
      try {
        assertLiteralTarget(new URL(url));
      } catch (error) {
        return { error: (error as Error).message, refused: error instanceof TargetRefusedError, durationMs: elapsed() };
      }
    }
    const stream = got.stream(url, {
      method: 'POST',
      body,
      headers,
      timeout: { request: this.options.timeoutMs ?? sendTimeoutMs },
      followRedirect: false,
      retry: { limit: 0 },
      throwHttpErrors: false,
      agent: this.#agents,
      dnsLookup: this.options.allowPrivateTargets ? undefined : guardedLookup,
      signal,
    });
    return new Promise<SendResult>((resolve) => {
      let statusCode: number | undefined;
      let retryAfter: string | undefined;
      const chunks: Buffer[] = [];
      let size = 0;
      let done = false;
      const finish = (error?: Error) => {
        if (done) {
          return;
        }
        done = true;
        stream.destroy();
        const refused = isRefusal(error);
        resolve({
          statusCode,
          body: statusCode === undefined ? undefined : Buffer.concat(chunks).subarray(0, bodyLimit).toString('utf8'),
          retryAfterMs: parseRetryAfter(retryAfter),
          // An error after the status line arrived (a stalled body) does not change the answer.
          error: statusCode === undefined && error ? describe(error) : undefined,
          refused,
          durationMs: elapsed(),
        });
      };
      stream.on('response', (response: { statusCode: number; headers: Record<string, string | undefined> }) => {
        statusCode = response.statusCode;
        retryAfter = response.headers['retry-after'];
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
    });
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
