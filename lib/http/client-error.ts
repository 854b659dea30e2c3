import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';

import type { Logger } from './logger.ts';

/** Node's answers to requests it cannot parse; anything else is 400. */
const statusOf: Record<string, number> = { HPE_HEADER_OVERFLOW: 431, HPE_CHUNK_EXTENSIONS_OVERFLOW: 413, ERR_HTTP_REQUEST_TIMEOUT: 408 };

/**
 * The server's `clientError` listener: a request that is not valid HTTP is logged by its parse error
 * (code and message; never the `rawPacket` the error carries, the request's bytes, which may hold a
 * bearer token or a password) and answered as Node answers it.
 */
export function answerMalformedRequest(logger: Logger) {
  return (error: Error & { code?: string }, socket: Duplex) => {
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    logger.info({ err: error }, 'malformed HTTP request');
    const status = statusOf[error.code ?? ''] ?? 400;
    socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nConnection: close\r\n\r\n`);
  };
}
