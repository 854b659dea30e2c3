import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import type { Context, Middleware } from 'koa';
import { HttpMethodEnum, koaBody } from 'koa-body';

import { RequestError } from './errors.ts';
import { maxBodyBytes, maxJsonDepth } from './limits.ts';

const jsonMediaType = /^application\/([\w.-]+\+)?json$/;
const loneSurrogate = /\p{Cs}/u;
const nul = '\u0000';

/** The answer to text holding U+0000, in the body, the path or the query: PostgreSQL's text cannot hold it. */
export const nulRefused = (where: string) =>
  new RequestError('guard.invalid_input', { reason: `The request ${where} holds a NUL character (\\u0000).` });

/** Whether a path's or a query's values (strings, or lists of them) hold U+0000. */
export const holdsNul = (values: Record<string, unknown>): boolean =>
  Object.values(values).some((value) =>
    (Array.isArray(value) ? value : [value]).some((item) => String(item).includes(nul)),
  );

/**
 * Whether the bytes koa-body reads are UTF-8. Its reader decodes them leniently (a bad byte becomes
 * U+FFFD, and the value stored is not the one sent), so the same chunks are kept as they arrive and
 * checked once the reader is done.
 */
function watchUtf8(request: IncomingMessage): { valid(): boolean; stop(): void } {
  const chunks: Buffer[] = [];
  const onData = (chunk: Buffer) => chunks.push(chunk);
  request.on('data', onData);
  return {
    valid: () => isUtf8(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)),
    stop: () => request.off('data', onData),
  };
}

type ReaderError = Error & { status?: number; type?: string };

/** koa-body's (raw-body's, co-body's) errors as the catalogue's. */
function refusal(error: ReaderError, limit: number): RequestError {
  if (error.status === 413) {
    return new RequestError('request.entity_too_large', { reason: `The request body is larger than ${limit} bytes.` });
  }
  if (error instanceof SyntaxError) {
    return new RequestError('guard.invalid_input', { reason: 'The request body is not valid JSON.' });
  }
  return new RequestError('guard.invalid_input', { reason: 'The request body was cut off.' });
}

/**
 * Runs one of koa-body's parsers on the request, its errors as the catalogue's. What comes after a
 * refused body's limit is read and dropped, not cut off, so the client gets the answer rather than a
 * reset connection. Compressed bodies are refused: the UTF-8 check reads the bytes as sent, and no
 * API body is large enough to be worth compressing.
 */
async function parseWith(ctx: Context, parser: Middleware, limit: number): Promise<void> {
  const encoding = ctx.get('content-encoding').toLowerCase();
  if (encoding !== '' && encoding !== 'identity') {
    ctx.req.resume();
    throw new RequestError('request.unsupported_media_type', {
      reason: `Compressed request bodies (content-encoding: ${encoding}) are not accepted.`,
    });
  }
  const utf8 = watchUtf8(ctx.req);
  try {
    await parser(ctx, async () => {});
  } catch (error) {
    ctx.req.resume();
    throw refusal(error as ReaderError, limit);
  } finally {
    utf8.stop();
  }
  if (!utf8.valid()) {
    throw new RequestError('guard.invalid_input', { reason: 'The request body is not valid UTF-8.' });
  }
}

/**
 * The nesting depth cap, lone UTF-16 surrogates (`"\ud800"`, which each database would store
 * differently, and lossily) and NUL (`"\u0000"`, which PostgreSQL refuses in text; refused on every
 * engine so that each answers alike); walked without recursion, so any depth is safe to look at.
 */
function checkJson(value: unknown): void {
  const stack: Array<[unknown, number]> = [[value, 1]];
  for (let entry = stack.pop(); entry !== undefined; entry = stack.pop()) {
    const [item, depth] = entry;
    if (typeof item === 'string') {
      if (loneSurrogate.test(item)) {
        throw new RequestError('guard.invalid_input', {
          reason: 'The request body holds a lone UTF-16 surrogate (\\ud800-\\udfff).',
        });
      }
      if (item.includes(nul)) {
        throw nulRefused('body');
      }
    } else if (item !== null && typeof item === 'object') {
      if (depth > maxJsonDepth) {
        throw new RequestError('guard.invalid_input', {
          reason: `The request body is nested deeper than ${maxJsonDepth} levels.`,
        });
      }
      for (const [key, child] of Object.entries(item)) {
        stack.push([key, depth], [child, depth + 1]);
      }
    }
  }
}

/** Whether the request carries bytes: a length other than 0, or chunks. */
const sendsBytes = (ctx: Context) =>
  ctx.get('transfer-encoding') !== '' || (ctx.get('content-length') !== '' && ctx.get('content-length') !== '0');

const bodyMethods = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const only = { json: false, urlencoded: false, text: false, multipart: false, patchNode: false } as const;

// Not strict: a body of `"x"` or `3` is valid JSON, refused by the route's schema with the field's message.
const readJson = koaBody({
  ...only,
  json: true,
  jsonStrict: false,
  jsonLimit: maxBodyBytes,
  jsonTypes: ['application/json', 'application/*+json'],
  parsedMethods: [HttpMethodEnum.POST, HttpMethodEnum.PUT, HttpMethodEnum.PATCH, HttpMethodEnum.DELETE],
});

/**
 * JSON request bodies of the API. A body must say it is JSON (`application/json`, UTF-8): anything
 * else is 415 before the route runs, so a form or text body cannot pass as an empty one. No body at
 * all (a bare `curl -X POST`) is an empty body, as is `application/json` with no bytes. Over 1 MB is
 * 413; malformed JSON, invalid UTF-8, nesting over 32 levels, a lone surrogate or a NUL is 400.
 */
export const jsonBody: Middleware = async (ctx, next) => {
  // Read already (the experience's parser runs before its routes, the management API's after), or none expected.
  if (ctx.req.readableEnded || !bodyMethods.has(ctx.method)) {
    await next();
    return;
  }
  const declared = ctx.get('content-type') !== '';
  const isJson = jsonMediaType.test(ctx.request.type) && ['', 'utf-8'].includes(ctx.request.charset.toLowerCase());
  if (declared ? !isJson : sendsBytes(ctx)) {
    ctx.req.resume();
    throw new RequestError('request.unsupported_media_type');
  }
  if (declared) {
    await parseWith(ctx, readJson, maxBodyBytes);
    const request = ctx.request as { body?: unknown };
    if (request.body === '') {
      request.body = undefined;
    } else {
      checkJson(request.body);
    }
  }
  await next();
};

/**
 * A reader of form bodies (`application/x-www-form-urlencoded`) of at most `limit` bytes, giving the
 * fields in the order sent. The caller answers other types; a form sent without saying so is 415.
 */
export function formReader(limit: number): (ctx: Context) => Promise<URLSearchParams> {
  const readForm = koaBody({
    ...only,
    urlencoded: true,
    formLimit: limit,
    includeUnparsed: true,
    parsedMethods: [HttpMethodEnum.POST],
  });
  return async (ctx) => {
    if (!ctx.is('application/x-www-form-urlencoded')) {
      if (sendsBytes(ctx)) {
        ctx.req.resume();
        throw new RequestError('request.unsupported_media_type');
      }
      return new URLSearchParams();
    }
    await parseWith(ctx, readForm, limit);
    return new URLSearchParams(ctx.request.rawBody ?? '');
  };
}
