import type { IncomingMessage } from 'node:http';
import type { Context, Middleware } from 'koa';

import { RequestError } from './errors.ts';
import { maxBodyBytes, maxJsonDepth } from './limits.ts';

/**
 * The request body, at most `limit` bytes (413 beyond). What comes after the limit is read and
 * dropped, not cut off, so that the client gets the answer rather than a reset connection.
 */
export async function readBody(ctx: Context, limit: number): Promise<Buffer> {
  const tooLarge = { reason: `The request body is larger than ${limit} bytes.` };
  if (Number(ctx.get('content-length')) > limit) {
    ctx.req.resume();
    throw new RequestError('request.entity_too_large', tooLarge);
  }
  const request: IncomingMessage = ctx.req;
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        reject(new RequestError('request.entity_too_large', tooLarge));
      } else {
        chunks.push(chunk);
      }
    });
    request.on('end', () => resolve(Buffer.concat(chunks)));
    request.on('error', () =>
      reject(new RequestError('guard.invalid_input', { reason: 'The request body was cut off.' })),
    );
  });
}

const jsonMediaType = /^application\/([\w.-]+\+)?json$/;
const loneSurrogate = /\p{Cs}/u;
const nul = '\u0000';

/** The answer to text holding U+0000, in the body, the path or the query: PostgreSQL's text cannot hold it. */
export const nulRefused = (where: string) =>
  new RequestError('guard.invalid_input', { reason: `The request ${where} holds a NUL character (\\u0000).` });

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

/**
 * JSON request bodies of the API. A body must say it is JSON (`application/json`, UTF-8): anything
 * else is 415 before the route runs, so a form or text body cannot pass as an empty one. No body at
 * all (a bare `curl -X POST`) is an empty body, as is `application/json` with no bytes. Over 1 MB is
 * 413; malformed JSON, invalid UTF-8, nesting over 32 levels, a lone surrogate or a NUL is 400.
 */
/** Whether a path's or a query's values (strings, or lists of them) hold U+0000. */
export const holdsNul = (values: Record<string, unknown>): boolean =>
  Object.values(values).some((value) =>
    (Array.isArray(value) ? value : [value]).some((item) => String(item).includes(nul)),
  );

export const jsonBody: Middleware = async (ctx, next) => {
  // Read already (the experience's parser runs before its routes, the management API's after), or none expected.
  if (ctx.req.readableEnded || ctx.method === 'GET' || ctx.method === 'HEAD' || ctx.method === 'OPTIONS') {
    await next();
    return;
  }
  const declared = ctx.get('content-type') !== '';
  const isJson = jsonMediaType.test(ctx.request.type) && ['', 'utf-8'].includes(ctx.request.charset.toLowerCase());
  if (declared && !isJson) {
    ctx.req.resume();
    throw new RequestError('request.unsupported_media_type');
  }
  const raw = await readBody(ctx, maxBodyBytes);
  if (raw.length > 0) {
    if (!declared) {
      throw new RequestError('request.unsupported_media_type');
    }
    let body: unknown;
    try {
      body = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(raw));
    } catch {
      throw new RequestError('guard.invalid_input', { reason: 'The request body is not valid JSON.' });
    }
    checkJson(body);
    (ctx.request as { body?: unknown }).body = body;
  }
  await next();
};
