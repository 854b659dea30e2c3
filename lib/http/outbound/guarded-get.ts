import { type IncomingMessage, request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';

import { assertLiteralTarget, guardedLookup } from './outbound-guard.ts';

/** Why a guarded GET (or POST) gave no JSON: the message says which step, never the body. */
export class GuardedGetError extends Error {
  override name = 'GuardedGetError';
}

export type GuardedGetOptions = {
  /** Names the URL in the guard's refusal: "the issuer's jwksUri", "the client's metadata document address". */
  subject: string;
  /** `HOOKS_ALLOW_PRIVATE_TARGETS`: loopback and private addresses are then reachable. */
  allowPrivateTargets: boolean;
  /** The whole exchange, in milliseconds. */
  timeoutMs: number;
  /** The largest answer read, in bytes; a larger one is refused, not cut. */
  sizeLimit: number;
  /** Refuse an http URL (else http and https). */
  httpsOnly?: boolean;
  /** Refuse an answer whose content type is not `application/json` or a `+json` type. */
  requireJsonType?: boolean;
};

export type GuardedGetAnswer = { body: unknown; cacheControl?: string };

/** application/json or a +json type (RFC 6839), with parameters or not. */
function isJsonType(contentType = ''): boolean {
  const type = contentType.split(';')[0].trim().toLowerCase();
  return type === 'application/json' || /^application\/[\w.-]+\+json$/.test(type);
}

function readBody(response: IncomingMessage, sizeLimit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    response.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > sizeLimit) {
        response.destroy(new GuardedGetError(`the answer is larger than ${sizeLimit} bytes`));
        return;
      }
      chunks.push(chunk);
    });
    response.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    response.on('error', reject);
  });
}

/** What a POST sends: its body as text, its type, and headers beside them (a key kept out of the URL). */
export type GuardedPayload = { contentType: string; text: string; headers?: Record<string, string> };

async function requestJson(
  url: string | URL,
  options: GuardedGetOptions,
  payload?: GuardedPayload,
): Promise<GuardedGetAnswer> {
  const target = new URL(url);
  const schemes = options.httpsOnly ? ['https:'] : ['http:', 'https:'];
  if (!schemes.includes(target.protocol)) {
    throw new GuardedGetError(`the URL is not ${options.httpsOnly ? 'https' : 'http(s)'}`);
  }
  if (!options.allowPrivateTargets) {
    try {
      assertLiteralTarget(target, options.subject);
    } catch (error) {
      throw new GuardedGetError((error as Error).message);
    }
  }
  const response = await new Promise<IncomingMessage>((resolve, reject) => {
    const request = (target.protocol === 'https:' ? httpsRequest : httpRequest)(target, {
      method: payload ? 'POST' : 'GET',
      headers: {
        accept: 'application/json',
        ...(payload && {
          ...payload.headers,
          'content-type': payload.contentType,
          'content-length': String(Buffer.byteLength(payload.text)),
        }),
      },
      lookup: options.allowPrivateTargets ? undefined : guardedLookup(options.subject),
      signal: AbortSignal.timeout(options.timeoutMs),
    });
    request.on('response', resolve);
    request.on('error', (error) => reject(new GuardedGetError(error.message)));
    request.end(payload?.text);
  });
  const refuse = (reason: string) => {
    response.resume();
    return new GuardedGetError(reason);
  };
  if (response.statusCode !== 200) {
    throw refuse(`the answer was HTTP ${response.statusCode}`);
  }
  const contentType = response.headers['content-type'];
  if (options.requireJsonType && !isJsonType(contentType)) {
    const type = contentType?.split(';')[0].trim();
    throw refuse(`the answer is ${type || 'without a content type'}, not application/json`);
  }
  if (Number(response.headers['content-length']) > options.sizeLimit) {
    throw refuse(`the answer is larger than ${options.sizeLimit} bytes`);
  }
  const text = await readBody(response, options.sizeLimit).catch((error: unknown) => {
    throw error instanceof GuardedGetError ? error : new GuardedGetError((error as Error).message);
  });
  try {
    return { body: JSON.parse(text) as unknown, cacheControl: response.headers['cache-control'] };
  } catch {
    throw new GuardedGetError('the answer is not JSON');
  }
}

/**
 * GETs a JSON document from a URL an administrator or a client named (an outside issuer's key set,
 * a client's metadata document), through the SSRF guard (`outbound-guard.ts`). No redirects: a
 * redirect could lead past the guard's intent, and a document must be at its own URL.
 */
export const guardedGetJson = (url: string | URL, options: GuardedGetOptions): Promise<GuardedGetAnswer> =>
  requestJson(url, options);

/**
 * POSTs to a verifier and reads its JSON answer (a captcha's siteverify), under the same guard and
 * limits as `guardedGetJson`.
 */
export const guardedPostJson = (
  url: string | URL,
  payload: GuardedPayload,
  options: GuardedGetOptions,
): Promise<GuardedGetAnswer> => requestJson(url, options, payload);
