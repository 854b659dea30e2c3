import type { IncomingMessage } from 'node:http';
import { request } from 'node:https';

import { assertLiteralTarget, guardedLookup } from '../../hooks/target-guard.ts';

/** Why a client's metadata document could not be had: the message says which step, never the body. */
export class DocumentUnavailable extends Error {
  override name = 'DocumentUnavailable';
}

/** A few seconds: the person waits on the authorization request while we fetch. */
const timeoutMs = 3000;
/** The draft's suggested cap: a client's metadata is small, and a large answer is someone's abuse. */
export const documentSizeLimit = 5 * 1024;

export type FetchedDocument = { body: unknown; cacheControl?: string };

function readBody(response: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    response.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > documentSizeLimit) {
        response.destroy(new DocumentUnavailable(`the document is larger than ${documentSizeLimit} bytes`));
        return;
      }
      chunks.push(chunk);
    });
    response.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    response.on('error', reject);
  });
}

/**
 * GETs a client's metadata document over https through the webhook targets' SSRF guard (unless
 * private targets are allowed: only public addresses, checked on the address connected to). No
 * redirects (the document must be at its own URL), 3 s, 5 KB, and only a JSON content type.
 */
export async function fetchClientDocument(url: URL, allowPrivateTargets: boolean): Promise<FetchedDocument> {
  if (!allowPrivateTargets) {
    try {
      assertLiteralTarget(url);
    } catch (error) {
      throw new DocumentUnavailable((error as Error).message);
    }
  }
  const response = await new Promise<IncomingMessage>((resolve, reject) => {
    const outgoing = request(url, {
      method: 'GET',
      headers: { accept: 'application/json' },
      lookup: allowPrivateTargets ? undefined : guardedLookup,
      signal: AbortSignal.timeout(timeoutMs),
    });
    outgoing.on('response', resolve);
    outgoing.on('error', (error) => reject(new DocumentUnavailable(error.message)));
    outgoing.end();
  });
  if (response.statusCode !== 200) {
    response.resume();
    throw new DocumentUnavailable(`the answer was HTTP ${response.statusCode}`);
  }
  // application/json or a +json type (RFC 6839), with parameters or not.
  const type = (response.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  if (type !== 'application/json' && !/^application\/[\w.-]+\+json$/.test(type)) {
    response.resume();
    throw new DocumentUnavailable(`the answer is ${type || 'without a content type'}, not application/json`);
  }
  if (Number(response.headers['content-length']) > documentSizeLimit) {
    response.resume();
    throw new DocumentUnavailable(`the document is larger than ${documentSizeLimit} bytes`);
  }
  const text = await readBody(response).catch((error: unknown) => {
    throw error instanceof DocumentUnavailable ? error : new DocumentUnavailable((error as Error).message);
  });
  try {
    return { body: JSON.parse(text) as unknown, cacheControl: response.headers['cache-control'] };
  } catch {
    throw new DocumentUnavailable('the document is not JSON');
  }
}
