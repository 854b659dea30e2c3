import { Agent as HttpAgent, type IncomingMessage, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

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

/** What is kept of a response body: the recent-logs excerpt. */
export const bodyLimit = 2048;
export const sendTimeoutMs = 10_000;

/**
 * Posts webhook bodies: one attempt each (no retries, no redirects), 10 s for the whole exchange,
 * at most 2 KB of the answer read. Node's own client, without a request library's layers: a
 * dispatcher sends hundreds a second. Keep-alive agents of its own, so that sockets made under one
 * guard setting are never reused under another.
 */
export class WebhookSender {
  readonly #agents: { http: HttpAgent; https: HttpsAgent };

  private readonly options: { allowPrivateTargets: boolean; timeoutMs?: number; keepAlive?: boolean };

  constructor(options: { allowPrivateTargets: boolean; timeoutMs?: number; keepAlive?: boolean }) {
    this.options = options;
    const keepAlive = options.keepAlive ?? true;
    this.#agents = { http: new HttpAgent({ keepAlive }), https: new HttpsAgent({ keepAlive }) };
  }

  async send(url: string, body: string, headers: Record<string, string>, signal?: AbortSignal): Promise<SendResult> {
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
    const content = Buffer.from(body, 'utf8');
    const https = target.protocol === 'https:';
    const timeoutMs = this.options.timeoutMs ?? sendTimeoutMs;
    return new Promise<SendResult>((resolve) => {
      let response: IncomingMessage | undefined;
      const chunks: Buffer[] = [];
      let size = 0;
      let done = false;
      const request = (https ? httpsRequest : httpRequest)(target, {
        method: 'POST',
        headers: { ...headers, 'content-length': String(content.length) },
        agent: https ? this.#agents.https : this.#agents.http,
        lookup: this.options.allowPrivateTargets ? undefined : guardedLookup(hookTargetSubject),
        signal,
      });
      const finish = (error?: Error) => {
        if (done) {
          return;
        }
        done = true;
        clearTimeout(timer);
        if (!response?.complete) {
          // Not read to its end (cut at the limit, stalled, failed): the socket is not reused.
          request.destroy();
        }
        const statusCode = response?.statusCode;
        const refused = isRefusal(error);
        resolve({
          statusCode,
          body: statusCode === undefined ? undefined : Buffer.concat(chunks).subarray(0, bodyLimit).toString('utf8'),
          retryAfterMs: parseRetryAfter(response?.headers['retry-after']),
          // An error after the status line arrived (a stalled body) does not change the answer.
          error: statusCode === undefined && error ? describe(error) : undefined,
          refused,
          durationMs: elapsed(),
        });
      };
      const timer = setTimeout(
        () => finish(Object.assign(new Error(`Timeout awaiting the answer for ${timeoutMs}ms`), { code: 'ETIMEDOUT' })),
        timeoutMs,
      );
      request.on('response', (answer: IncomingMessage) => {
        response = answer;
        answer.on('data', (chunk: Buffer) => {
          chunks.push(chunk);
          size += chunk.length;
          if (size >= bodyLimit) {
            finish();
          }
        });
        answer.on('end', () => finish());
        answer.on('error', (error: Error) => finish(error));
        answer.on('close', () => finish());
      });
      request.on('error', (error: Error) => finish(error));
      request.end(content);
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
