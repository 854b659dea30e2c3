import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';

import { assertLiteralTarget, guardedLookup } from './target-guard.ts';

/** Why a guarded GET gave no JSON: the message says which step, never the body. */
export class GuardedGetError extends Error {
  override name = 'GuardedGetError';
}

const timeoutMs = 5000;
const sizeLimit = 256 * 1024;

function readBody(response: IncomingMessage): Promise<string> {
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

/**
 * GETs a JSON document from a URL an administrator or a client named (an outside issuer's key set,
 * a client's metadata document), through the webhook targets' SSRF guard: http(s) only, and unless
 * private targets are allowed, only public addresses, checked on the address connected to. No
 * redirects (a redirect could lead past the guard's intent), 5 s, 256 KB.
 */
export async function guardedGetJson(url: string, allowPrivateTargets: boolean): Promise<unknown> {
  const target = new URL(url);
  if (target.protocol !== 'http:' && target.protocol !== 'https:') {
    throw new GuardedGetError('the URL is not http(s)');
  }
  if (!allowPrivateTargets) {
    try {
      assertLiteralTarget(target);
    } catch (error) {
      throw new GuardedGetError((error as Error).message);
    }
  }
  const response = await new Promise<IncomingMessage>((resolve, reject) => {
    const request = (target.protocol === 'https:' ? httpsRequest : httpRequest)(target, {
      method: 'GET',
      headers: { accept: 'application/json' },
      lookup: allowPrivateTargets ? undefined : guardedLookup,
      signal: AbortSignal.timeout(timeoutMs),
    });
    request.on('response', resolve);
    request.on('error', (error) => reject(new GuardedGetError(error.message)));
    request.end();
  });
  if (response.statusCode !== 200) {
    response.resume();
    throw new GuardedGetError(`the answer was HTTP ${response.statusCode}`);
  }
  const body = await readBody(response).catch((error: unknown) => {
    throw error instanceof GuardedGetError ? error : new GuardedGetError((error as Error).message);
  });
  try {
    return JSON.parse(body) as unknown;
  } catch {
    throw new GuardedGetError('the answer is not JSON');
  }
}
